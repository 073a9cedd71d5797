-- Code cells: `code-fold` puts a cell's code in a <details> (HTML only);
-- every code block gets a wrapper the copy button script attaches to.
-- A cell's output is written here as plain <pre><code>: given a block whose classes name no
-- language, pandoc's highlighter searches every syntax it knows (a third of a second per page).

function CodeBlock(cb)
  if not cb.classes:includes("cell-output") or not FORMAT:match("html") then return nil end
  local text = cb.text:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
  return pandoc.RawBlock("html", '<pre class="' .. table.concat(cb.classes, " ") .. '"><code>'
    .. text .. "</code></pre>")
end

function Div(div)
  -- a cell with no output (its code hidden) leaves an empty div: typst would lay it out as an
  -- empty block, a paragraph's gap of blank space in the PDF (116 of them in the book)
  if div.classes:includes("cell") and #div.content == 0 and FORMAT:match("typst") then return {} end
  if not div.classes:includes("cell") or not FORMAT:match("html") then return nil end
  local out = pandoc.Blocks{}
  local changed = false
  for _, b in ipairs(div.content) do
    local fold = b.t == "CodeBlock" and b.attributes["code-fold"]
    if fold == "true" or fold == "show" then
      local summary = b.attributes["code-summary"] or "Code"
      b.attributes["code-fold"] = nil
      b.attributes["code-summary"] = nil
      out:insert(pandoc.RawBlock("html", '<details class="code-fold"' .. (fold == "show" and " open" or "")
        .. "><summary>" .. summary:gsub("<", "&lt;") .. "</summary>"))
      out:insert(b)
      out:insert(pandoc.RawBlock("html", "</details>"))
      changed = true
    else
      out:insert(b)
    end
  end
  if changed then div.content = out return div end
end
