--[[ print-tabsets.lua: a tabset in print (PDF, EPUB, anything but HTML) is its tabs one after
another, each under its title in bold: `::: {.panel-tabset}` with one heading per tab.

Quarto has no tabset for typst: it falls back to level-4 headings and prints "couldn't
recognize format" for each tabset (render in src/resources/filters/customnodes/panel-tabset.lua).
Run at `pre-ast`, before Quarto parses tabsets, this filter leaves it none to fall back on,
and both builds print the same.
]]

if FORMAT:match("html") then return {} end

local function tabs_of(div)
  local level
  for _, b in ipairs(div.content) do
    if b.t == "Header" then level = b.level break end
  end
  local out = pandoc.Blocks({})
  for _, b in ipairs(div.content) do
    if b.t == "Header" and b.level == level then
      out:insert(pandoc.Para({ pandoc.Strong(b.content) }))
    else
      out:insert(b)
    end
  end
  return out
end

return {
  {
    Div = function(div)
      if div.classes:includes("panel-tabset") then return tabs_of(div) end
    end,
  },
}
