-- Quarto tabsets: ::: {.panel-tabset group="language"} with one heading per tab.
-- HTML: an accessible tablist (assets/js/book.js keeps a group in step and remembers it).
-- Other formats (the PDF): every tab in turn, its title in bold.

local counter = 0

local function split(div)
  local level
  for _, b in ipairs(div.content) do
    if b.t == "Header" then level = b.level break end
  end
  local tabs = {}
  for _, b in ipairs(div.content) do
    if b.t == "Header" and b.level == level then
      table.insert(tabs, {title = b.content, blocks = pandoc.Blocks{}})
    elseif #tabs > 0 then
      tabs[#tabs].blocks:insert(b)
    end
  end
  return tabs
end

local function esc(s)
  return (s:gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("<", "&lt;"))
end

function Div(div)
  if not div.classes:includes("panel-tabset") then return nil end
  local tabs = split(div)
  if #tabs == 0 then return nil end
  local out = pandoc.Blocks{}
  if not FORMAT:match("html") then
    for _, tab in ipairs(tabs) do
      out:insert(pandoc.Para({pandoc.Strong(tab.title)}))
      out:extend(tab.blocks)
    end
    return out
  end
  counter = counter + 1
  local group = div.attributes.group
  local buttons = {}
  for i, tab in ipairs(tabs) do
    local key = pandoc.utils.stringify(tab.title)
    local id = "tabset-" .. counter .. "-" .. i
    local label = pandoc.write(pandoc.Pandoc({pandoc.Plain(tab.title)}), "html"):gsub("%s+$", "")
    table.insert(buttons, string.format(
      '<button type="button" role="tab" id="%s-tab" aria-controls="%s" aria-selected="%s" tabindex="%s" data-tab="%s">%s</button>',
      id, id, i == 1 and "true" or "false", i == 1 and "0" or "-1", esc(key), label))
  end
  local attrs = group and (' data-group="' .. esc(group) .. '"') or ""
  out:insert(pandoc.RawBlock("html", '<div class="panel-tabset"' .. attrs .. '><div role="tablist">'
    .. table.concat(buttons) .. "</div>"))
  for i, tab in ipairs(tabs) do
    local id = "tabset-" .. counter .. "-" .. i
    out:insert(pandoc.RawBlock("html", string.format(
      '<div role="tabpanel" id="%s" aria-labelledby="%s-tab"%s>', id, id, i == 1 and "" or " hidden")))
    out:extend(tab.blocks)
    out:insert(pandoc.RawBlock("html", "</div>"))
  end
  out:insert(pandoc.RawBlock("html", "</div>"))
  return out
end
