--[[ glossary.lua: glossary terms declared in chapters' front matter.

  terms:
    - term: arithmetic intensity
      def: "The FLOPs a kernel performs per byte it moves."

In prose, `[arithmetic intensity]{.term}` (or `[intensities]{.term key="arithmetic
intensity"}`) becomes a link to the term's entry on the glossary page
(`#term-<slug>`), carrying its definition for a hover (title and data-definition);
a chapter that declares terms gets a "Terms in this chapter" callout after its
last block, out of the way of its opening (a reader meets each definition at the
term's first use, as a hover in HTML, and in the Glossary appendix).  Every chapter's terms are known
on every page: the chapter list comes from _quarto.yml and each chapter's front
matter from disk.  An unknown term, or a term declared by two chapters, stops
the build.  The glossary page is the chapter file named glossary.qmd.
]]

local stringify = pandoc.utils.stringify

-- A definition as plain text (a hover's title and data-definition): a superscript as ^x, which every
-- font draws (QK^T), where stringify would run it into its base (QKT).
local function plain(inlines)
  return stringify(pandoc.Inlines(inlines):walk({
    Superscript = function(s) return pandoc.Str("^" .. stringify(s.content)) end,
  }))
end
local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)
local is_html = FORMAT:match("html") ~= nil

local function fail(message, file, needle)
  project.fail("glossary.lua", message, file, needle)
end

--- The slug of a term: lower case, runs of other characters become one "-".
local function slug(name)
  return (name:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", ""))
end

local function key_of(name)
  return (name:lower():gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

local function front_matter(path)
  local meta = project.front_matter(path)
  if not meta then fail("cannot read " .. path .. " (listed in _quarto.yml)", "_quarto.yml", path) end
  return meta
end

local function as_inlines(value)
  if pandoc.utils.type(value) == "Blocks" then return pandoc.utils.blocks_to_inlines(value) end
  if pandoc.utils.type(value) == "Inlines" then return value end
  return pandoc.Inlines(stringify(value))
end

-- state for the page being written
local terms = {}        -- key -> {name, def (Inlines), text, chapter}
local glossary_page     -- source path of the glossary page, if the book has one
local page, root = "", ""  -- output path of this page, and the way back to the site root

local function register(meta, chapter)
  local seen = {}
  for i, t in ipairs(meta.terms or {}) do
    if pandoc.utils.type(t) ~= "table" or not t.term or not t.def then
      fail("entry " .. i .. " of `terms:` needs both `term:` and `def:`", chapter, "terms:")
    end
    local name = stringify(t.term)
    local key = key_of(name)
    local prev = terms[key]
    if seen[key] or (prev and prev.chapter ~= chapter) then
      fail(('term "%s" is defined twice: in %s and in %s; define each term in one chapter')
        :format(name, prev and prev.chapter or chapter, chapter), chapter, "term: " .. name)
    end
    seen[key] = true
    local def = as_inlines(t.def)
    terms[key] = { name = name, def = def, text = plain(def), chapter = chapter }
  end
end

local function lookup(name)
  local key = key_of(name)
  return terms[key] or terms[key:gsub("es$", "")] or terms[key:gsub("s$", "")]
end

local function setup(meta)
  local own = project.page(meta)
  page = own:gsub("%.qmd$", ".html")
  root = project.offset(meta)
  local listed = false
  for _, path in ipairs(project.chapter_list()) do
    if pandoc.path.filename(path) == "glossary.qmd" then glossary_page = path end
    if path == own then listed = true end
    register(path == own and meta or front_matter(path), path)
  end
  if not listed then register(meta, own ~= "" and own or "this page") end
end

local function term_link(content, entry)
  local id = "term-" .. slug(entry.name)
  if not glossary_page then return pandoc.Span(content, { class = "term" }) end
  if not is_html then return pandoc.Link(content, "#" .. id) end  -- the PDF is one document
  local target = glossary_page:gsub("%.qmd$", ".html")
  local href = (target == page and "" or root .. target) .. "#" .. id
  return pandoc.Link(content, href, entry.text,  -- attributes as a list: a stable order
    pandoc.Attr("", { "term" }, { { "data-term", entry.name }, { "data-definition", entry.text } }))
end

local function Span(span)
  if not span.classes:includes("term") then return nil end
  local name = span.attributes.key or stringify(span.content)
  local entry = lookup(name)
  if not entry then
    local source = page:gsub("%.html$", ".qmd")
    fail(('unknown term "%s": declare it under `terms:` in the front matter of the chapter '
      .. 'that defines it, or give the right key with {.term key="..."}'):format(name), source,
      span.attributes.key and ('key="' .. span.attributes.key) or ("[" .. stringify(span.content) .. "]{.term"))
  end
  return term_link(span.content, entry)
end

local function terms_box(meta)
  local items = {}
  for _, t in ipairs(meta.terms or {}) do
    local entry = terms[key_of(stringify(t.term))]
    local name = pandoc.Inlines({ pandoc.Strong(pandoc.Inlines(entry.name)) })
    local line = pandoc.Inlines({ term_link(name, entry), pandoc.Str(":"), pandoc.Space() })
    line:extend(entry.def)
    table.insert(items, { pandoc.Plain(line) })
  end
  if #items == 0 then return nil end
  -- left out of search (the glossary holds the same definitions, weighted): otherwise a chapter's
  -- first hit for a term is this box at its top, not the section that teaches it
  return pandoc.Div({ pandoc.BulletList(items) },
    { class = "callout-note terms-box", title = "Terms in this chapter", ["data-pagefind-ignore"] = "" })
end

function Pandoc(doc)
  setup(doc.meta)
  doc = doc:walk({ Span = Span })
  return project.each_chapter(doc, function(meta) return { terms_box(meta) } end, "end")
end
