--[[ prerequisites.lua: a chapter says which chapters it builds on.

  prerequisites: [chapters/roofline.qmd, chapters/cuda-threads.qmd]

in a chapter's front matter (the chapter map in the appendices draws the same lists) adds
"Builds on @sec-roofline (*its title*) and @sec-cuda-threads (*its title*)." at the end of the chapter's "Learning goals"
callout, or after its title.  Each reference is the listed chapter's own label (the id of its
first-level heading), so the book's cross-referencing numbers and links it as any other
`@sec-` reference.  A listed file that is missing, or whose title has no `{#sec-...}` label,
stops the build.
]]

local stringify = pandoc.utils.stringify
local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)
local this_page = ""

local function fail(message, needle)
  project.fail("prerequisites.lua", message, this_page, needle)
end

--- The label and title of a chapter file: `# Title {#sec-label}`.
local function chapter_of(path)
  local label, title = project.chapter_label(path)
  if label then return label, title end
  if not project.read(path) then fail("prerequisite " .. path .. " does not exist", path) end
  fail("the title of prerequisite " .. path .. " has no {#sec-...} label to refer to", path)
end

local function sentence(chapters)
  local inlines = pandoc.Inlines({ pandoc.Str("Builds"), pandoc.Space(), pandoc.Str("on"), pandoc.Space() })
  for i, ch in ipairs(chapters) do
    local label, title = ch[1], ch[2]
    if i > 1 then
      if i == #chapters then
        inlines:extend({ pandoc.Space(), pandoc.Str("and"), pandoc.Space() })
      else
        inlines:insert(pandoc.Str(","))
        inlines:insert(pandoc.Space())
      end
    end
    inlines:insert(pandoc.Cite({ pandoc.Str("@" .. label) }, { pandoc.Citation(label, "AuthorInText") }))
    inlines:extend({ pandoc.Space(), pandoc.Str("(") })
    inlines:insert(pandoc.Emph(pandoc.read(title, "markdown").blocks[1].content))
    inlines:insert(pandoc.Str(")"))
  end
  inlines:insert(pandoc.Str("."))
  return pandoc.Para(inlines)
end

function Pandoc(doc)
  this_page = project.page(doc.meta)
  return project.each_chapter(doc, function(meta)
    local listed = meta.prerequisites
    if not listed or #listed == 0 then return nil end
    local chapters = {}
    for _, path in ipairs(listed) do table.insert(chapters, { chapter_of(stringify(path)) }) end
    return { sentence(chapters) }
  end, "goals")
end
