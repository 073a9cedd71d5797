--[[ problem.lua: back-of-envelope problems, checked in the page (issue #43).

Writing a problem (the author's guide). A problem is a fenced div with an id starting `prob-`
and a title. Its Python cell comes first and makes the worked answer with calc.problems; the
statement follows, ordinary markdown whose numbers come from inline `{python}` code that may use
the cell's names (inline code runs in document order, after the cell, as the chapters already rely on):

  ::: {.problem #prob-h100-ridge title="The H100's ridge point"}
  ```{python}
  #| output: asis
  from calc import problems, specs
  h = specs.device("h100-sxm")
  p = problems.problem()
  peak = p.step("Dense BF16 peak:", h.peak_flops("bf16"), "FLOP/s")      # a fact: "text:" value
  bw = p.step("HBM bandwidth:", h.mem_bw, "B/s")
  ridge = p.step(f"Ridge point = {peak} / {bw}", peak / bw, "FLOP/B")   # "text = value"
  p.note("Above it the compute roof holds.")                            # a line without a number
  p.answer(ridge, "FLOP/B", right=0.03, close=0.10)
  print(p.markdown())
  ```

  An H100 SXM does `{python} problems.show(peak, "FLOP/s")` of dense BF16 and reads HBM at
  `{python} problems.show(bw, "B/s")`. Above what arithmetic intensity is a BF16 kernel compute-bound?
  :::

End a chapter with `## Problems {#sec-<chapter>-problems}` holding 6-10 of them, graded from
plugging in a figure to choosing a configuration; the introduction's sentence about typing an
answer goes in `[...]{.content-visible when-format="html:js"}` (see chapters/roofline.qmd).

* Values are in base units as calc returns them (FLOP, B, s, FLOP/s, B/s, J, W; a fraction for
  "%"); the unit string says how a value is shown and what a reader's bare number means. A unit
  without a prefix gets one chosen for the value ("B/s" shows 3.35 TB/s); one with a prefix keeps
  it ("GiB", "ms", "TB/s"). Counted things ("GPUs", "tokens/s") are plain numbers with a word.
* `p.step(text, value, unit)` is one line of the working; it returns the value as a number that
  prints as its shown text, so a later step's f-string quotes it. Shown at two significant
  figures, three where two would be more than 1 % off. A step that restates a fact the
  statement gives should be guarded with calc.check.check, so a changed datasheet stops the build.
* `p.answer(value, unit, right=, close=)`: both bands are required fractions (0.03 is ±3 %),
  0 < right < close < 1; the page shows them. Usual bands: ±3 %/±10 % for a plug-in, ±5 %/±15 %
  where rounding a datasheet figure moves the answer, wider where the chapter's rule of thumb
  should count as right; an exact count (a grid's blocks) gets a band narrower than one unit.
* Unit words the reader may type are calc.problems' table (`_ATOMS`), which
  assets/js/problem-units.js repeats (a test compares the two): add a counted word to both.
* The cell runs twice: in the chapter, and alone in the Solutions appendix
  (calc.problems.solutions_markdown), so it imports everything it uses. `bookbuild check`
  refuses a problem without an id, a title, a cell, an `answer(`, a readable unit or both bands.
* The reader's answer is read by assets/js/problem-units.js (the same rules as calc.problems.parse;
  tests/fixtures/problem_units.json): "295", "0.3 kFLOP/byte", "1.2 TB/s", "80 GiB", "3.4 ms".

What this filter makes. The cell prints a `.problem-answer` div (the answer's value, unit and
bands as attributes, the worked answer inside). In HTML the problem becomes a <section
class="problem"> with its label ("Problem 3"), the statement, a labelled text field, Check and
"Show the worked answer" buttons, the bands, a live result region and the worked answer
(hidden); assets/js/problems.js grades in the page, offline, and keeps progress beside the
exercises'. Every other format gets the label, the statement and the unit to answer in, with a
link to the worked answer in the Solutions appendix. Run at `pre-ast` like the book's others.
]]

local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)
local is_html = FORMAT:match("html") ~= nil and not FORMAT:match("epub")
local page, root = "", ""
local count, first = 0, true

local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local function raw(text) return pandoc.RawBlock("html", text) end

--- The problem's content without its answer div (and without a cell left empty by removing
--- it); the answer div.
local function split(div)
  local answer = nil
  local content = div.content:walk({
    Div = function(d)
      if d.classes:includes("problem-answer") then answer = d; return {} end
    end,
  })
  local kept = pandoc.Blocks({})
  for _, b in ipairs(content) do
    if not (b.t == "Div" and b.classes:includes("cell") and #b.content == 0) then kept:insert(b) end
  end
  return kept, answer
end

local function loader()
  return raw('<link rel="stylesheet" href="' .. root .. 'assets/css/problems.css">\n'
    .. '<script type="module" src="' .. root .. 'assets/js/problems.js"></script>')
end

local function html(div, n, statement, answer)
  local id, a = div.identifier, answer.attributes
  local out = pandoc.Blocks({})
  if first then out:insert(loader()); first = false end
  local title = div.attributes["title"] or ""
  local unit = a["unit"] or ""
  local bands = "Right within ±" .. a["right-pct"] .. "%, close within ±" .. a["close-pct"] .. "%."
  out:insert(raw('<section class="problem" id="' .. esc(id) .. '" data-problem="' .. esc(id)
    .. '" data-value="' .. esc(a["value"]) .. '" data-unit="' .. esc(unit) .. '" data-right="' .. esc(a["right"])
    .. '" data-close="' .. esc(a["close"]) .. '" data-shown="' .. esc(a["shown"] or "") .. '" aria-labelledby="' .. esc(id) .. '-label">'))
  out:insert(raw('<p class="problem-label" id="' .. esc(id) .. '-label"><span class="problem-kind">Problem '
    .. n .. '</span> ' .. esc(title) .. '</p>'))
  out:insert(pandoc.Div(statement, pandoc.Attr("", { "problem-statement" })))
  local unit_words = unit ~= "" and (" (in " .. esc(unit) .. ")") or ""
  out:insert(raw('<form class="problem-form" novalidate>'
    .. '<label for="' .. esc(id) .. '-input">Your answer' .. unit_words .. '</label>'
    .. '<span class="problem-row"><input type="text" id="' .. esc(id) .. '-input" class="problem-input" '
    .. 'autocomplete="off" autocapitalize="off" spellcheck="false" enterkeyhint="done" '
    .. 'aria-describedby="' .. esc(id) .. '-bands ' .. esc(id) .. '-result">'
    .. '<button type="submit" class="problem-check">Check</button>'
    .. '<button type="button" class="problem-show" aria-expanded="false" aria-controls="' .. esc(id)
    .. '-worked">Show the worked answer</button></span>'
    .. '<p class="problem-bands" id="' .. esc(id) .. '-bands">' .. bands
    .. ' A number without a unit is read in ' .. (unit ~= "" and esc(unit) or "plain units")
    .. '. Checked in this page; nothing is sent.</p>'
    .. '<p class="problem-result" id="' .. esc(id) .. '-result" role="status" aria-live="polite"></p>'
    .. '</form>'))
  local worked = pandoc.Blocks({ raw('<p class="problem-worked-title"><strong>Worked answer</strong></p>') })
  worked:extend(answer.content)
  out:insert(pandoc.Div(worked, pandoc.Attr(id .. "-worked", { "problem-worked" }, { hidden = "" })))
  out:insert(raw('</section>'))
  return out
end

local function other(div, n, statement, answer)
  local id, a = div.identifier, answer.attributes
  local out = pandoc.Blocks({})
  out:insert(pandoc.Para({ pandoc.Strong({ pandoc.Str("Problem " .. n .. ": " .. (div.attributes["title"] or "")) }) }))
  out:extend(statement)
  local unit = a["unit"] or ""
  local tail = pandoc.Inlines({ pandoc.Emph(pandoc.Inlines(
    (unit ~= "" and ("Answer in " .. unit .. "; ") or "") .. "worked answer: ")) })
  tail:insert(pandoc.Link(pandoc.Inlines("Solutions"), root .. "appendices/solutions.qmd#sol-" .. id))
  tail:insert(pandoc.Str("."))
  out:insert(pandoc.Para(tail))
  return pandoc.Div(out, pandoc.Attr(id, { "problem-print" }))
end

local function pct(x)
  local v = tonumber(x) * 100
  local r = math.floor(v * 1e6 + 0.5) / 1e6
  if r == math.floor(r) then return string.format("%d", r) end
  return (string.format("%.2g", v))
end

local function Div(div)
  if not div.classes:includes("problem") then return nil end
  local id = div.identifier
  if not id:match("^prob%-") then
    project.fail("problem.lua", "a problem needs an id starting with prob- (got #" .. id .. ")", page, ".problem")
  end
  count = count + 1
  local statement, answer = split(div)
  if not answer then
    project.fail("problem.lua", "problem #" .. id .. " has no answer: its Python cell must print "
      .. "p.markdown() with #| output: asis (calc.problems)", page, id)
  end
  for _, k in ipairs({ "value", "right", "close" }) do
    if not tonumber(answer.attributes[k]) then
      project.fail("problem.lua", "problem #" .. id .. "'s answer has no " .. k, page, id)
    end
  end
  answer.attributes["right-pct"] = pct(answer.attributes["right"])
  answer.attributes["close-pct"] = pct(answer.attributes["close"])
  if is_html then return html(div, count, statement, answer) end
  return other(div, count, statement, answer)
end

return {
  { Meta = function(meta) page = project.page(meta); root = project.offset(meta) end },
  { Div = Div },
}
