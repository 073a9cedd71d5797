--[[ print-margins.lua: in the PDF, margin content is a small-print aside in the text column.

`::: {.column-margin}` prints as `#aside[...]` (defined by bookbuild's book.typ and by the
book's typst partial, _typst/typst-show.typ), and `::: {.column-page-right}` as its plain
content, as bookbuild has always printed them.

Under Quarto any column class in a typst document turns on its margin layout (marginalia, in
src/resources/filters/layout/meta.lua: `layoutState.hasColumns`): the text column shrinks to
under half the page (48.5 % of A4) and the tables are squeezed into it. Run at `pre-ast`,
before Quarto reads the column classes, this filter leaves it none, so the page keeps the
geometry `_quarto.yml` sets (`margin:`), the same as bookbuild's.
]]

if FORMAT ~= "typst" then return {} end

return {
  {
    Div = function(div)
      if div.classes:includes("column-margin") then
        local out = pandoc.Blocks({ pandoc.RawBlock("typst", "#aside[") })
        out:extend(div.content)
        out:insert(pandoc.RawBlock("typst", "]"))
        return out
      end
      if div.classes:includes("column-page-right") then
        div.classes = div.classes:filter(function(c) return c ~= "column-page-right" end)
        return div
      end
    end,
  },
}
