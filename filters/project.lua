--[[ project.lua: what the book's filters need to know about the project, the same under
real Quarto and under bookbuild, whatever directory Pandoc runs in.  Not a filter: the
filters load it with

  local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)

(`PANDOC_SCRIPT_FILE` is relative to Pandoc's working directory, as `dofile` is, so that
join needs no normalising.  The filter passes its own: under Quarto a file run by `dofile`
sees the global one, Quarto's main filter.)

* `project.root`: the project folder, absolute.  Quarto gives it as `quarto.project.directory`
  (its QUARTO_PROJECT_DIR; src/resources/pandoc/datadir/init.lua); otherwise it is the folder
  above this file's.  Quarto runs Pandoc in the chapter's folder, so `PANDOC_SCRIPT_FILE` is
  `../filters/x.lua` there: every path is made absolute and its `..` collapsed
  (`pandoc.path.normalize` leaves `..` alone).
* `project.page(meta)`: the page being written, relative to the root (`chapters/x.qmd`), and
  `project.offset(meta)`: the way from its HTML page back to the site root (`../`).
* `project.read(path)`, `project.write(path, text)`: a project file by its path from the root
  (`write` makes the folders and renames a finished file into place).
* `project.fail(message, file, needle)`: stops the build with `file:line: message`.  Quarto
  replaces the global `error` of user filters with a logger (src/resources/filters/common/log.lua)
  and carries on; its own filters stop a render with `fatal`, which raises through Lua's builtin
  error.  `assert` is Lua's own in both, so a failed filter makes Pandoc exit non-zero and
  `quarto render` (and bookbuild) stop.
]]

return function(script_file)
local M = {}

--- `path` made absolute (against Pandoc's working directory) with `.` and `..` collapsed.
function M.absolute(path)
  if not pandoc.path.is_absolute(path) then
    path = pandoc.path.join({ pandoc.system.get_working_directory(), path })
  end
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      if #parts > 0 then table.remove(parts) end
    elseif part ~= "." then
      table.insert(parts, part)
    end
  end
  return "/" .. table.concat(parts, "/")
end

local in_quarto = quarto ~= nil and quarto.project ~= nil
if in_quarto and quarto.project.directory then
  M.root = M.absolute(quarto.project.directory)
else
  M.root = pandoc.path.directory(pandoc.path.directory(M.absolute(script_file)))
end

--- The source file of the page being written, relative to the root: bookbuild's `book-page`
--- (its HTML output), else Quarto's input file.
function M.page(meta)
  if meta and meta["book-page"] then
    return (pandoc.utils.stringify(meta["book-page"]):gsub("%.html$", ".qmd"))
  end
  local input = (in_quarto and quarto.doc and quarto.doc.input_file) or PANDOC_STATE.input_files[1]
  if not input or input == "-" then return "" end
  local rel = pandoc.path.make_relative(M.absolute(input), M.root)
  return (rel:gsub("%.knit%.md$", ".qmd"):gsub("%.ipynb$", ".qmd"))
end

--- From the page's HTML file back to the site root: "" or "../" or "../../".
function M.offset(meta)
  if meta and meta["book-root"] then return pandoc.utils.stringify(meta["book-root"]) end
  return ("../"):rep(select(2, M.page(meta):gsub("/", "")))
end

function M.read(path)
  local f = io.open(pandoc.path.join({ M.root, path }), "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

--- Write `text` to the project file `path` (relative to the root), making its folders: written under
--- a temporary name and renamed, so a reader (another chapter's Pandoc) never sees half a file.
function M.write(path, text)
  local full = pandoc.path.join({ M.root, path })
  pandoc.system.make_directory(pandoc.path.directory(full), true)
  local tmp = string.format("%s.%s.tmp", full, pandoc.utils.sha1(tostring({}) .. os.clock()))
  local f = assert(io.open(tmp, "w"), "project.lua: cannot write " .. tmp)
  f:write(text)
  f:close()
  assert(os.rename(tmp, full))
end

--- 1-based line of the first occurrence of `needle` (plain text) in the project file `file`.
function M.line_of(file, needle)
  local text = file and needle and M.read(file)
  local at = text and text:find(needle, 1, true)
  if not at then return nil end
  return select(2, text:sub(1, at):gsub("\n", "")) + 1
end

local function yaml_meta(yaml)
  return pandoc.read("---\n" .. yaml .. "\n---\n", "markdown").meta
end
M.yaml_meta = yaml_meta

--- A project file's front matter (a Meta table; empty if it has none), or nil if unreadable.
function M.front_matter(path)
  local text = M.read(path)
  if not text then return nil end
  local yaml = text:match("^%-%-%-[ \t]*\r?\n(.-)\r?\n%-%-%-[ \t]*\r?\n")
  return yaml and yaml_meta(yaml) or {}
end

--- Chapter sources in book order (chapters, then appendices), from _quarto.yml.
function M.chapter_list()
  local text = M.read("_quarto.yml")
  if not text then return {} end
  local book = yaml_meta(text).book or {}
  local out = {}
  local function add(entries)
    for _, e in ipairs(entries or {}) do
      if pandoc.utils.type(e) == "table" and e.chapters then add(e.chapters)
      elseif pandoc.utils.type(e) == "table" and e.href then table.insert(out, pandoc.utils.stringify(e.href))
      elseif pandoc.utils.type(e) ~= "table" then table.insert(out, pandoc.utils.stringify(e)) end
    end
  end
  add(book.chapters)
  add(book.appendices)
  return out
end

--- The label and title of a chapter file's first heading, `# Title {#sec-label}` (nil if none).
function M.chapter_label(path)
  local text = M.read(path)
  if not text then return nil end
  for line in text:gmatch("[^\n]*") do
    local title, label = line:match("^#%s+(.-)%s*{#(sec%-[%w%-_]+)[^}]*}%s*$")
    if label then return label, title end
    if line:match("^#%s") then return nil end
  end
end

--- For each chapter in `doc`, call `make(meta, chapter)` and put the blocks it returns after the
--- chapter's "Learning goals" callout (at its end with `where` "goals"), else after its title; with
--- `where` "end", after the chapter's last block (before the next level-1 heading: a chapter or a part).  A page is one chapter (its own
--- front matter is `doc.meta`); Quarto's PDF of a book is one document of every chapter, each
--- starting at its `# Title {#sec-...}` heading, with the front matter left out of `doc.meta`
--- (src/project/types/book/book-render.ts): there each chapter's is read from its file.
function M.each_chapter(doc, make, where)
  local starts = {}                      -- {index of the level-1 heading, chapter path}
  local by_label = {}
  for _, path in ipairs(M.chapter_list()) do
    local label = M.chapter_label(path)
    if label then by_label[label] = path end
  end
  for i, b in ipairs(doc.blocks) do
    if b.t == "Header" and b.level == 1 and by_label[b.identifier] then
      table.insert(starts, { i, by_label[b.identifier] })
    end
  end
  local whole = #starts <= 1
  if whole then starts = { { starts[1] and starts[1][1] or 0, M.page(doc.meta) } } end
  for n = #starts, 1, -1 do
    local first, path = starts[n][1], starts[n][2]
    local last = n < #starts and starts[n + 1][1] - 1 or #doc.blocks
    local meta = whole and doc.meta or M.front_matter(path) or {}
    local blocks = make(meta, path)
    if blocks and where == "end" then
      local at, from = last, first
      if from == 0 then
        for i, b in ipairs(doc.blocks) do
          if b.t == "Header" and b.level == 1 then from = i break end
        end
      end
      for i = from + 1, last do
        local b = doc.blocks[i]
        if b.t == "Header" and b.level == 1 then at = i - 1 break end
      end
      for k = #blocks, 1, -1 do doc.blocks:insert(at + 1, blocks[k]) end
    elseif blocks then
      local at, goals = first, nil
      for i = first + 1, last do
        local b = doc.blocks[i]
        if b.t == "Div" and b.classes:includes("callout-note")
            and (b.attributes.title or ""):lower() == "learning goals" then
          at, goals = i, b
          break
        end
      end
      if goals and where == "goals" then
        goals.content:extend(blocks)
        blocks = {}
      end
      if at == 0 and first == 0 then
        for i, b in ipairs(doc.blocks) do
          if b.t == "Header" and b.level == 1 then at = i break end
        end
      end
      for k = #blocks, 1, -1 do doc.blocks:insert(at + 1, blocks[k]) end
    end
  end
  return doc
end

--- Stop the build: "<filter>: <file>:<line>: <message>" on stderr (bookbuild reads this line),
--- then a Lua error that neither Quarto nor Pandoc swallows.
function M.fail(filter, message, file, needle)
  local where = file or ""
  local line = M.line_of(file, needle)
  if line then where = where .. ":" .. line end
  local text = filter .. ": " .. (where ~= "" and (where .. ": ") or "") .. message
  io.stderr:write(text .. "\n")
  assert(false, text)
end

return M
end
