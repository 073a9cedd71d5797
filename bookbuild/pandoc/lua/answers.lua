-- Predict-then-reveal in print: a `.predict` callout followed by a collapsed callout (the answer)
-- works in the web page, where the answer stays folded until the reader opens it. On paper and in
-- the EPUB the answer would sit right under its question, so it moves to an "Answers" section at
-- the end of the chapter; the question says where to find it and the answer links back.
if FORMAT:match("html") then return {} end

local function is_predict(b)
  return b and b.t == "Div" and b.classes:includes("predict")
end

local function is_answer(b)
  return b and b.t == "Div" and b.attributes.collapse == "true"
    and b.classes:find_if(function(c) return c:match("^callout%-") end) ~= nil
end

function Pandoc(doc)
  local chapter = "page"
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" and b.level == 1 and b.identifier ~= "" then chapter = b.identifier; break end
  end
  local out, answers = pandoc.Blocks{}, pandoc.Blocks{}
  local n, i = 0, 1
  while i <= #doc.blocks do
    local b = doc.blocks[i]
    if is_predict(b) and is_answer(doc.blocks[i + 1]) then
      n = n + 1
      local q_id, a_id = "predict-" .. chapter .. "-" .. n, "answer-" .. chapter .. "-" .. n
      if b.identifier ~= "" then q_id = b.identifier end
      b.identifier = ""   -- the callout writers drop ids: a Div around each callout carries it
      b.attributes.title = (b.attributes.title or "Predict") .. " " .. n
      b.content:insert(pandoc.Para{pandoc.Emph{pandoc.Str("The"), pandoc.Space(),
        pandoc.Link("answer", "#" .. a_id), pandoc.Space(), pandoc.Str("is"), pandoc.Space(),
        pandoc.Str("at"), pandoc.Space(), pandoc.Str("the"), pandoc.Space(), pandoc.Str("end"),
        pandoc.Space(), pandoc.Str("of"), pandoc.Space(), pandoc.Str("the"), pandoc.Space(),
        pandoc.Str("chapter.")}})
      out:insert(pandoc.Div({b}, {id = q_id}))
      local a = doc.blocks[i + 1]
      a.identifier = ""
      a.attributes.collapse = nil
      a.attributes.title = "Answer " .. n
      local back = pandoc.Link({pandoc.Str("Back"), pandoc.Space(), pandoc.Str("to"), pandoc.Space(),
        pandoc.Str("the"), pandoc.Space(), pandoc.Str("question")}, "#" .. q_id)
      local last = a.content[#a.content]
      if last and last.t == "Para" then   -- on the answer's last line: never a page of its own
        last.content:extend({pandoc.Space(), pandoc.Str("("), back, pandoc.Str(")")})
      else
        a.content:insert(pandoc.Para{back})
      end
      answers:insert(pandoc.Div({a}, {id = a_id}))
      i = i + 2
    else
      out:insert(b)
      i = i + 1
    end
  end
  if #answers > 0 then
    out:insert(pandoc.Header(2, "Answers to the predictions", {id = "answers-" .. chapter, class = "unnumbered"}))
    out:extend(answers)
  end
  doc.blocks = out
  return doc
end
