-- Quarto callouts: ::: {.callout-note title="..." collapse="true"}
-- HTML: a titled box (a <details> when collapsible). Typst: a #callout(...) call.

local KINDS = {note = "Note", tip = "Tip", warning = "Warning", important = "Important", caution = "Caution"}

local function kind_of(div)
  for _, cls in ipairs(div.classes) do
    local k = cls:match("^callout%-(%a+)$")
    if k and KINDS[k] then return k end
  end
end

local function title_of(div, kind)
  if div.attributes.title then
    return pandoc.read(div.attributes.title, "markdown").blocks[1].content
  end
  local first = div.content[1]
  if first and first.t == "Header" then
    div.content:remove(1)
    return first.content
  end
  return pandoc.Inlines{pandoc.Str(KINDS[kind])}
end

local function html(div, kind, title)
  local collapse = div.attributes.collapse
  local id = div.identifier ~= "" and (' id="' .. div.identifier .. '"') or ""
  -- a box the search leaves out (the glossary filter's terms box) stays left out
  if div.attributes["data-pagefind-ignore"] then id = id .. " data-pagefind-ignore" end
  local extra = "" -- the author's own classes stay, as Quarto keeps them (e.g. .predict)
  for _, cls in ipairs(div.classes) do
    if cls ~= "callout-" .. kind then extra = extra .. " " .. cls end
  end
  local head = pandoc.write(pandoc.Pandoc({pandoc.Plain(title)}), "html")
  local open, close
  if collapse == "true" or collapse == "false" then
    local o = collapse == "false" and " open" or ""
    open = '<details class="callout callout-' .. kind .. extra .. '"' .. id .. o .. '><summary class="callout-title">'
           .. head .. '</summary><div class="callout-body">'
    close = "</div></details>"
  else
    open = '<div class="callout callout-' .. kind .. extra .. '"' .. id .. ' role="note"><div class="callout-title">'
           .. head .. '</div><div class="callout-body">'
    close = "</div></div>"
  end
  local out = pandoc.Blocks{pandoc.RawBlock("html", open)}
  out:extend(div.content)
  out:insert(pandoc.RawBlock("html", close))
  return out
end

local function typst(div, kind, title)
  if div.classes:includes("takeaway") then kind = "takeaway" end  -- a rule to carry away: its own colour
  local head = pandoc.write(pandoc.Pandoc({pandoc.Plain(title)}), "typst")
  local out = pandoc.Blocks{pandoc.RawBlock("typst",
    '#callout(kind: "' .. kind .. '", title: [' .. head:gsub("%s+$", "") .. '])[')}
  out:extend(div.content)
  out:insert(pandoc.RawBlock("typst", "]"))
  return out
end

function Div(div)
  local kind = kind_of(div)
  if not kind then return nil end
  local title = title_of(div, kind)
  if FORMAT:match("html") then return html(div, kind, title) end
  if FORMAT == "typst" then return typst(div, kind, title) end
  -- other formats (the EPUB's pages, docx...): a titled box the format's styles can draw
  local out = pandoc.Blocks{pandoc.Para({pandoc.Strong(title)})}
  out:extend(div.content)
  return pandoc.Div(out, {class = "callout callout-" .. kind})
end
