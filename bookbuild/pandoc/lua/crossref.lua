-- Quarto-style cross-references for a whole book.
-- The build numbers every label across all pages first (bookbuild/pandoc/xref.py) and passes
-- the index as a JSON file in metadata `book-xref`; this filter puts the numbers on
-- headings, captions and equations, and turns @fig-x / @tbl-x / @sec-x / @eq-x into links.

local index, page, root
-- Quarto's defaults: tables and listings captioned above, figures below
local cap_top = {fig = false, tbl = true, lst = true}
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
    -- (no break inside "Appendix B" nor before the dash, which never starts a line; a line may
    -- break after it: with a no-break space there too, "Appendix A — Glossary" was one unbreakable
    -- run, wider than a 390 px phone, and "Glossary" was cut off at the screen's edge). The gap
    -- before the dash is a character, not only the number's margin: search results, copied text
    -- and screen readers read the text, which said "Appendix A— Glossary"; the class drops the
    -- margin so the eye sees one gap.
    h.content = {pandoc.Span(pandoc.Str("Appendix" .. NBSP .. number),
                             {class = "header-section-number appendix-number"}),
                 pandoc.Str(NBSP .. "—"), pandoc.Space(), table.unpack(h.content)}
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
  if not info or (info.kind ~= "fig" and info.kind ~= "tbl" and info.kind ~= "lst") then return nil end
  local blocks = div.content
  local caption = pandoc.Inlines{}
  -- where Quarto finds a float div's caption (parsefiguredivs.lua, parse_float_div): the last
  -- paragraph of two or more blocks, else a `fig-cap` / `tbl-cap` attribute, else a table's own caption
  local cap_attr = info.kind .. "-cap"
  if #blocks > 1 and blocks[#blocks].t == "Para" then
    caption = blocks[#blocks].content
    blocks = pandoc.Blocks{table.unpack(blocks, 1, #blocks - 1)}
  elseif div.attributes[cap_attr] then
    caption = pandoc.utils.blocks_to_inlines(pandoc.read(div.attributes[cap_attr], "markdown").blocks)
  else
    blocks = blocks:walk({Table = function(tbl)
      local long = tbl.caption.long
      if #caption == 0 and #long > 0 and #long[#long].content > 0 then
        caption = long[#long].content
        tbl.caption = {long = pandoc.Blocks{}}
        return tbl
      end
    end})
  end
  local long = caption_prefix(info)
  long:extend(caption)
  local attr = pandoc.Attr(div.identifier, {"quarto-float", "float-" .. info.kind}, {})
  numbered[div.identifier] = true
  return placed(pandoc.Figure(blocks, {long = {pandoc.Plain(long)}}, attr), info.kind)
end

-- The floats Quarto makes of other blocks (quarto-pre/parsefiguredivs.lua; bookbuild/pandoc/xref.py's
-- float_label finds the same ones): each becomes a Figure with the numbered caption.
local function as_float(id, kind, content, caption)
  local long = caption_prefix(entry(id))
  long:extend(caption or {})
  numbered[id] = true
  return placed(pandoc.Figure(content, {long = {pandoc.Plain(long)}},
                              pandoc.Attr(id, {"quarto-float", "float-" .. kind}, {})), kind)
end

-- a table captioned with `: caption {#tbl-x}`
local function Table(tbl)
  local id = tbl.identifier
  local info = entry(id)
  local long = tbl.caption.long
  if not info or numbered[id] or #long == 0 or #long[#long].content == 0 then return nil end
  local caption = long[#long].content
  tbl.caption = {long = pandoc.Blocks{}}
  tbl.identifier = ""
  return as_float(id, info.kind, {tbl}, caption)
end

-- code with a `lst-` id and an `lst-cap`
local function CodeBlock(code)
  local id = code.identifier
  local info = entry(id)
  local cap = code.attributes["lst-cap"]
  if not info or info.kind ~= "lst" or not cap or numbered[id] then return nil end
  code.attributes["lst-cap"] = nil
  code.identifier = ""
  local parsed = pandoc.read(cap, "markdown").blocks
  return as_float(id, "lst", {code}, #parsed > 0 and parsed[1].content or {})
end

-- a paragraph that is one image (or a link around one) with a float id: a figure even uncaptioned
local function lone_image(para)
  local c = para.content
  if #c ~= 1 then return nil end
  if c[1].t == "Image" then return c[1] end
  if c[1].t == "Link" and #c[1].content == 1 and c[1].content[1].t == "Image" then return c[1].content[1] end
end

local function image_float(para)
  local img = lone_image(para)
  local info = img and entry(img.identifier)
  if not info or numbered[img.identifier] or (info.kind ~= "fig" and info.kind ~= "tbl") then return nil end
  local id, caption = img.identifier, img.caption
  img.identifier = ""
  img.caption = pandoc.Inlines{}
  return as_float(id, info.kind, {pandoc.Plain(para.content)}, caption)
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

-- $$ ... $$ {#eq-label}, as Quarto's crossref/equations.lua reads it: display math, any spaces,
-- then an attribute block starting `{#eq-` that may run over several inlines ({#eq-x alt="..."}).
-- Every equation of the paragraph is numbered and its label text dropped.
local function equations(block)
  local c = block.content
  local out, changed, i = pandoc.List{}, false, 1
  while i <= #c do
    local el = c[i]
    local j = i + 1
    while c[j] and c[j].t == "Space" do j = j + 1 end
    local lab = c[j]
    local label = el.t == "Math" and el.mathtype == "DisplayMath" and lab and lab.t == "Str"
                  and lab.text:match("^{#(eq%-[^%s}]+)")
    local info = label and entry(label)
    if info then
      local last = j
      while c[last] and not (c[last].t == "Str" and c[last].text:match("}$")) do last = last + 1 end
      if FORMAT:match("html") then
        el.text = el.text .. " \\tag{" .. info.number .. "}"
      else
        el.text = el.text .. " \\qquad (" .. info.number .. ")"
      end
      out:insert(pandoc.Span({el}, {id = label, class = "equation"}))
      changed = true
      i = (c[last] and last or j) + 1
    else
      out:insert(el)
      i = i + 1
    end
  end
  if changed then
    block.content = out
    return block
  end
end

local function Para(para)
  return equations(para) or image_float(para)
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
  {Header = Header, Div = float_div, Para = Para, Plain = equations, Table = Table, CodeBlock = CodeBlock},
  {Figure = Figure, Cite = Cite},
}
