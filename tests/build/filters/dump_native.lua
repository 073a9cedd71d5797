-- Test helper: writes the document as the filters before it left it (Pandoc's native form) to
-- ast.native in the working directory, whatever the output format.
function Pandoc(doc)
  local f = io.open("ast.native", "w")
  f:write(pandoc.write(doc, "native"))
  f:close()
end
