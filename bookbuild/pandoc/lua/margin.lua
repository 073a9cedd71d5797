-- Margin content: ::: {.column-margin} and footnotes as sidenotes
-- (`reference-location: margin`). HTML gets <aside> and numbered sidenotes that
-- the stylesheet floats into the margin on wide screens and folds inline on phones.
-- The PDF keeps footnotes; margin blocks become small-print asides.

local margin_notes = false
local count = 0

local function Meta(meta)
  local loc = meta["reference-location"]
  margin_notes = loc and pandoc.utils.stringify(loc) == "margin"
end

local function Div(div)
  if not div.classes:includes("column-margin") then return nil end
  if FORMAT:match("html") then
    local out = pandoc.Blocks{pandoc.RawBlock("html", '<aside class="column-margin">')}
    out:extend(div.content)
    out:insert(pandoc.RawBlock("html", "</aside>"))
    return out
  end
  if FORMAT == "typst" then
    local out = pandoc.Blocks{pandoc.RawBlock("typst", "#aside[")}
    out:extend(div.content)
    out:insert(pandoc.RawBlock("typst", "]"))
    return out
  end
end

local function Note(note)
  if not (margin_notes and FORMAT:match("html")) then return nil end
  count = count + 1
  local n = tostring(count)
  local inlines = pandoc.Inlines{}
  for i, block in ipairs(note.content) do
    if i > 1 then inlines:insert(pandoc.Space()) end
    if block.content and block.t ~= "BulletList" and block.t ~= "OrderedList" then
      inlines:extend(block.content)
    else
      inlines:insert(pandoc.Str(pandoc.utils.stringify(block)))
    end
  end
  local mark = pandoc.RawInline("html", string.format(
    '<label for="sn-%s" class="sidenote-ref" id="snref-%s"><sup>%s</sup></label>' ..
    '<input type="checkbox" id="sn-%s" class="sidenote-toggle" aria-label="Footnote %s">', n, n, n, n, n))
  local body = pandoc.Span({pandoc.Span(pandoc.Str(n .. "."), {class = "sidenote-number"}),
                            pandoc.Space(), table.unpack(inlines)},
                           {class = "sidenote", id = "sn-body-" .. n, role = "note"})
  return {mark, body}
end

return {{Meta = Meta}, {Div = Div, Note = Note}}
