-- PDF tables. Pandoc gives a wide pipe table's columns equal shares of the page (from its equal
-- dash counts), which wrapped short headers ("FLOP/B, batch / 1") beside a column that needed
-- less: typst's auto columns size each column by its content instead (widths an author set,
-- unequal ones, stay). And a hyphenated word in a cell is kept whole ("compute- / bound" broke at
-- its hyphen in a narrow column): the line breaks at a space instead.

local function whole_words(cell_blocks)
  return cell_blocks:walk({
    Str = function(s)
      if s.text:match("^%a[%w]*%-[%w%-]*%w[.,;:]?$") then   -- a word joiner after each hyphen
        return pandoc.RawInline("typst", (s.text:gsub("%-", "-\\u{2060}")))
      end
    end,
  })
end

function Table(tbl)
  if not FORMAT:match("typst") then return nil end
  local first = tbl.colspecs[1] and tbl.colspecs[1][2]
  local equal = type(first) == "number"
  for _, spec in ipairs(tbl.colspecs) do
    if type(spec[2]) ~= "number" or math.abs(spec[2] - first) > 1e-6 then equal = false end
  end
  if equal then
    for i, spec in ipairs(tbl.colspecs) do tbl.colspecs[i] = { spec[1] } end
  end
  local function rows(list)
    for _, row in ipairs(list) do
      for _, cell in ipairs(row.cells) do cell.contents = whole_words(cell.contents) end
    end
  end
  rows(tbl.head.rows)
  for _, body in ipairs(tbl.bodies) do rows(body.head); rows(body.body) end
  rows(tbl.foot.rows)
  return tbl
end
