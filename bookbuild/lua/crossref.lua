-- Quarto-style cross-references for a whole book.
-- The build numbers every label across all pages first (bookbuild/xref.py) and passes
-- the index as a JSON file in metadata `book-xref`; this filter puts the numbers on
-- headings, captions and equations, and turns @fig-x / @tbl-x / @sec-x / @eq-x into links.

local index, page, root
local cap_top = {fig = false, tbl = true}   -- Quarto's defaults: tables captioned above, figures below
local headers = {}
local numbered = {}  -- floats already given their number
local NAMES = {fig = "Figure", tbl = "Table", sec = "Section", eq = "Equation",
               lst = "Listing", chapter = "Chapter"}

local function read_index(meta)
  for kind, _ in pairs(cap_top) do
    local key = kind .. "-cap-location"
    local where = meta[key] or meta["book-" .. key]
    if where then cap_top[kind] = pandoc.utils.stringify(where) == "top" end
  end
  if not meta["book-xref"] then return nil end
  local f = assert(io.open(pandoc.utils.stringify(meta["book-xref"]), "r"))
  index = pandoc.json.decode(f:read("a"))
  f:close()
  page = pandoc.utils.stringify(meta["book-page"] or "")
  root = pandoc.utils.stringify(meta["book-root"] or "")
  for _, h in ipairs(index.sections[page] or {}) do headers[h.id] = h.number end
end

local function href(info, label)
  -- the PDF is one document: every label is local to it
  if info.page == page or not FORMAT:match("html") then return "#" .. label end
  return root .. info.page .. "#" .. label
end

local function entry(label)
  return index and index.labels[label]
end

-- "Figure 7.1" with a no-break space, as Quarto's refs.lua (nbspString): a reference never breaks
-- across lines between its name and its number.
local NBSP = "\u{a0}"

local function ref_text(info)
  local kind = info.kind
  if kind == "chapter" then
    if info.number:match("^%a$") then return "Appendix" .. NBSP .. info.number end
    return "Chapter" .. NBSP .. info.number
  end
  return (NAMES[kind] or kind) .. NBSP .. info.number
end

local function number_span(number)
  return pandoc.Span(pandoc.Str(number), {class = "header-section-number"})
end

local function Header(h)
  local number = headers[h.identifier]
  if not number or number == "" then return nil end
  if h.level == 1 and number:match("^%a$") and FORMAT:match("html") then
    -- an appendix page's title, as Quarto's formatChapterTitle (src/project/types/book/book-chapters.ts):
    -- "Appendix A — Glossary"
    -- (no break inside "Appendix B" nor on either side of the dash, which never dangles at a
    -- line's end or start on a phone; one gap before it: the number's margin)
    h.content = {pandoc.Span(pandoc.Str("Appendix" .. NBSP .. number), {class = "header-section-number"}),
                 pandoc.Str("—" .. NBSP), table.unpack(h.content)}
    h.attributes["data-number"] = number
    return h
  end
  h.content = {number_span(number), pandoc.Space(), table.unpack(h.content)}
  h.attributes["data-number"] = number
  return h
end

local function caption_prefix(info)
  return pandoc.Inlines{pandoc.Span(pandoc.Str(NAMES[info.kind] .. NBSP .. info.number .. ":"),
                                    {class = "float-number"}), pandoc.Space()}
end

-- A caption above its float: a class for the HTML (styles move the figcaption up), and for
-- the PDF a typst rule scoped to the block that holds the figure.
local function placed(fig, kind)
  if not cap_top[kind] then return fig end
  fig.classes:insert("cap-top")
  if FORMAT:match("typst") then
    return pandoc.Div({pandoc.RawBlock("typst", "#set figure.caption(position: top)"), fig})
  end
  return fig
end

local function float_div(div)
  local info = entry(div.identifier)
  if not info or (info.kind ~= "fig" and info.kind ~= "tbl") then return nil end
  local blocks = div.content
  local caption = pandoc.Inlines{}
  if #blocks > 1 and blocks[#blocks].t == "Para" then
    caption = blocks[#blocks].content
    blocks = pandoc.Blocks{table.unpack(blocks, 1, #blocks - 1)}
  end
  local long = caption_prefix(info)
  long:extend(caption)
  local attr = pandoc.Attr(div.identifier, {"quarto-float", "float-" .. info.kind}, {})
  numbered[div.identifier] = true
  return placed(pandoc.Figure(blocks, {long = {pandoc.Plain(long)}}, attr), info.kind)
end

local function Figure(fig)
  local info = entry(fig.identifier)
  if not info or numbered[fig.identifier] then return nil end
  local long = caption_prefix(info)
  local first = fig.caption.long[1]
  if first then long:extend(first.content) end
  fig.caption.long = {pandoc.Plain(long)}
  return placed(fig, info.kind)
end

local function Para(para)
  -- $$ ... $$ {#eq-label}: number the equation and drop the label text
  for i, el in ipairs(para.content) do
    if el.t == "Math" and el.mathtype == "DisplayMath" then
      local j = i + 1
      if para.content[j] and para.content[j].t == "Space" then j = j + 1 end
      local lab = para.content[j]
      if lab and lab.t == "Str" and lab.text:match("^{#eq%-.+}$") then
        local label = lab.text:sub(3, -2)
        local info = entry(label)
        if info then
          if FORMAT:match("html") then
            el.text = el.text .. " \\tag{" .. info.number .. "}"
          else
            el.text = el.text .. " \\qquad (" .. info.number .. ")"
          end
          local span = pandoc.Span({el}, {id = label, class = "equation"})
          local out = pandoc.List{}
          for k = 1, i - 1 do out:insert(para.content[k]) end
          out:insert(span)
          for k = j + 1, #para.content do out:insert(para.content[k]) end
          para.content = out
          return para
        end
      end
    end
  end
end

local function Cite(cite)
  local out = pandoc.Inlines{}
  for n, c in ipairs(cite.citations) do
    local info = entry(c.id)
    if not info then return nil end -- a bibliography citation: citeproc's business
    if n > 1 then out:insert(pandoc.Str(n == #cite.citations and " and " or ", ")) end
    local text = c.mode == "SuppressAuthor" and info.number or ref_text(info)
    out:extend(c.prefix)
    if #c.prefix > 0 then out:insert(pandoc.Space()) end
    -- attributes as a list of pairs: a Lua table's order would change from run to run
    out:insert(pandoc.Link(text, href(info, c.id), "",
      pandoc.Attr("", {"xref"}, {{"data-xref-kind", info.kind}, {"data-xref-title", info.title or ""}})))
    out:extend(c.suffix)
  end
  return out
end

return {
  {Meta = read_index},
  {Header = Header, Div = float_div, Para = Para},
  {Figure = Figure, Cite = Cite},
}
