-- A paragraph of bold text alone is a run-in title (a printed tab's from filters/print-tabsets.lua,
-- an exercise's from filters/exercise.lua). In the PDF it stays with the block after it, as a
-- heading does: a sticky block, so that no page ends with the title and its table or statement
-- overleaf. bookbuild's typst only (this filter is not Quarto's and Quarto does not run it).
if FORMAT ~= "typst" then return {} end

function Para(para)
  if #para.content ~= 1 or para.content[1].t ~= "Strong" then return nil end
  local title = pandoc.write(pandoc.Pandoc({ pandoc.Plain(para.content) }), "typst"):gsub("%s+$", "")
  return pandoc.RawBlock("typst", "#block(sticky: true)[" .. title .. "]")
end
