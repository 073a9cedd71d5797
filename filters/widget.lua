--[[ widget.lua: interactive figures from `::: {.widget name="roofline" device="h100-sxm"}`.

The div's other attributes are the widget's initial parameters; its content,
if any, is the caption.  HTML gets the widget's static HTML (figure, readouts,
disabled controls) which assets/js/widgets-host.js brings to life; every other
format (typst/PDF, docx, ...) gets the SVG as a figure plus the readouts as a
table.  The figure comes from `python -m widgets render`, run in the project
root (filters/project.lua); BOOK_PYTHON names the interpreter.  An unknown widget,
parameter or choice stops the build with the chapter's file and line.
]]

local PYTHON = os.getenv("BOOK_PYTHON") or "python3"
local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)
local is_html = FORMAT:match("html") ~= nil
local page = ""        -- the chapter being written, for error messages
local host_included = false

local function fail(message, needle)
  project.fail("widget.lua", message, page, needle)
end

local function render(name, params, format, caption_html)
  local args = { "-m", "widgets", "render", name, "--params", pandoc.json.encode(params),
                 "--format", format }
  if caption_html and caption_html ~= "" then
    table.insert(args, "--caption"); table.insert(args, caption_html)
  end
  local ok, out = pcall(pandoc.system.with_working_directory, project.root, function()
    return pandoc.pipe(PYTHON, args, "")
  end)
  if not ok then   -- `python -m widgets` said what is wrong on stderr (unknown parameter or choice)
    fail(('widget "%s" cannot be drawn with %s'):format(name, pandoc.json.encode(params)),
      'name="' .. name .. '"')
  end
  return out
end

--- The page's widgets come alive through assets/js/widgets-host.js.  bookbuild's page template
--- loads it on pages with widgets; under Quarto the filter asks for it in the page's head, with
--- a site-root path that Quarto's HTML post-processor makes relative to the page
--- (resolveResourceRefs in src/project/types/website/website-resources.ts).
local function include_host()
  if host_included or not is_html or not (quarto and quarto.doc and quarto.doc.include_text) then return end
  host_included = true
  quarto.doc.include_text("in-header",
    '<link rel="stylesheet" href="/assets/css/widgets.css">\n<script async src="/assets/js/widgets-host.js"></script>')
end

--- Every non-HTML format gets each static figure as a real file, named by its content, under
--- FIGURES in the project, and refers to it from the project root ("/.bookcache/...").  Quarto
--- renders a book's PDF from one merged document, and its resourceRefs filter (quarto-cli
--- src/resources/filters/quarto-init/resourcerefs.lua, resourceRef in common/paths.lua) runs after
--- this pre-ast filter: it prefixes a relative image path with the chapter's folder ("chapters/")
--- but only strips the "/" of a project-relative one, so the merged index.typ, at the project root,
--- finds the file.  bookbuild compiles typst with the project as its root, where "/..." is the same
--- file.  The mediabag holds the same bytes under the same name, so Pandoc fetches nothing (and
--- bookbuild's --extract-media copies it beside the page's other media, as before).
local FIGURES = ".bookcache/widget-figures"

local function figure_file(name, svg)
  local rel = string.format("%s/widget-%s-%s.svg", FIGURES, name, pandoc.utils.sha1(svg):sub(1, 16))
  if project.read(rel) ~= svg then project.write(rel, svg) end   -- named by content: written once
  local src = "/" .. rel
  pandoc.mediabag.insert(src, "image/svg+xml", svg)
  return src
end

local function params_of(div)
  local params = {}
  for k, v in pairs(div.attributes) do
    if k ~= "name" then params[k] = v end
  end
  return params
end

--- The readouts as a table: one value column, or one per printed state (headed by its label).
local function readout_table(readouts, states, labels)
  local rows = {}
  states = states or { readouts }
  for i, r in ipairs(states[1]) do
    local row = { { pandoc.Plain(pandoc.Str(r[1])) } }
    for _, state in ipairs(states) do table.insert(row, { pandoc.Plain(pandoc.Str(state[i] and state[i][2] or "")) }) end
    table.insert(rows, row)
  end
  local header, aligns, widths = { { pandoc.Plain("Readout") } }, { "AlignLeft" }, { 0 }
  for i = 1, #states do
    table.insert(header, { pandoc.Plain(labels and labels[i] or "Value") })
    table.insert(aligns, "AlignRight"); table.insert(widths, 0)
  end
  local simple = pandoc.SimpleTable({}, aligns, widths, header, rows)
  local tbl = pandoc.utils.from_simple_table(simple)
  tbl.classes:insert("widget-readouts")
  return tbl
end

local function Div(div)
  if not div.classes:includes("widget") then return nil end
  local name = div.attributes.name
  if not name then fail('a .widget div needs name="..." (python3 -m widgets list names them)', ".widget") end
  local params = params_of(div)
  if is_html then
    include_host()
    if div.identifier:match("^fig%-") then
      -- `::: {#fig-x .widget}`: a figure that @fig-x numbers and links to.  Written as Quarto's own
      -- div figure (the caption as its last paragraph), which Quarto reads after this filter
      -- (at pre-ast) and bookbuild's crossref.lua alike; the widget draws no caption of its own.
      local caption = pandoc.utils.blocks_to_inlines(div.content)
      return pandoc.Div({ pandoc.RawBlock("html", render(name, params, "html", "")), pandoc.Para(caption) },
        { id = div.identifier, class = "widget-figure" })
    end
    local caption = #div.content > 0 and pandoc.write(pandoc.Pandoc(div.content), "html") or ""
    return pandoc.RawBlock("html", render(name, params, "html", caption))
  end
  -- In print and EPUB a widget is a numbered figure (its static drawing and readouts stand for it),
  -- which needs an id for Quarto's cross-references to number it.
  if not div.identifier:match("^fig%-") then
    fail(('widget "%s" needs a figure id, ::: {#fig-... .widget name="%s"}: print and EPUB number it'):format(name, name),
      'name="' .. name .. '"')
  end
  local result = pandoc.json.decode(render(name, params, "json"), false)
  local null = pandoc.json.null
  local caption = pandoc.utils.blocks_to_inlines(div.content)
  local images = {}
  if result.frames and result.frames ~= pandoc.json.null then
    -- An animation: its key frames (first, middle, last) side by side; the caption says which.
    local steps = {}
    for _, s in ipairs(result.frame_steps) do table.insert(steps, string.format("%d", s)) end
    local last = table.remove(steps)
    local which = #steps > 0 and (table.concat(steps, ", ") .. " and " .. last) or last
    -- (states chosen by print_frames are named by their labels, in the alt text and the table)
    if result.frame_labels == null or not result.frame_labels then
      caption:extend({ pandoc.Space(), pandoc.Str("Shown: steps " .. which .. ".") })
    end
    for i, svg in ipairs(result.frames) do
      local file = figure_file(string.format("%s-step%d", name, result.frame_steps[i]), svg)
      local labels = result.frame_labels ~= null and result.frame_labels or nil
      local alts = result.frame_alts ~= null and result.frame_alts or nil
      local alt = { pandoc.Str(alts and alts[i] or labels and labels[i] or string.format("Step %d", result.frame_steps[i])) }
      -- two to a row: three across a printed page would shrink the frames' labels below 7 pt
      local per_row = math.min(2, #result.frames)
      table.insert(images, pandoc.Image(alt, file, "", { ["width"] = string.format("%d%%", 96 // per_row) }))
      if i < #result.frames then
        table.insert(images, i % per_row == 0 and pandoc.LineBreak() or pandoc.Space())
      end
    end
  else
    local file = figure_file(name, result.svg)
    -- alt text: what the drawing shows, in words (the caption is printed under it already)
    local alt = result.alt ~= null and result.alt ~= "" and { pandoc.Str(result.alt) } or caption
    images = { pandoc.Image(alt, file, "", { ["width"] = "100%" }) }
  end
  local figure = pandoc.Figure(pandoc.Plain(images), { pandoc.Plain(caption) },
                               { id = div.identifier, class = "widget-static" })
  local out
  if result.frame_readouts and result.frame_readouts ~= null then
    out = { figure, readout_table(nil, result.frame_readouts, result.frame_labels) }
    for i, m in ipairs(result.frame_messages) do
      if m ~= null then table.insert(out, pandoc.Para({ pandoc.Emph(pandoc.Str(result.frame_labels[i] .. ": " .. m)) })) end
    end
  else
    out = { figure, readout_table(result.readouts) }
    if result.message and result.message ~= null then
      table.insert(out, pandoc.Para({ pandoc.Emph(pandoc.Str(result.message)) }))
    end
  end
  return out
end

return {
  { Meta = function(meta) page = project.page(meta) end },
  { Div = Div },
}
