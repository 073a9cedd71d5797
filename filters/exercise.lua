--[[ exercise.lua: exercises where the reader writes a kernel and the simulator checks it.

An exercise is written in Quarto's own syntax (the format: docs/exercises.md):

  ::: {.exercise #ex-coalesced-copy}
  The statement...
  ```{.python .starter}        the kernel the reader starts from
  ```
  ::: {.hint}  ... :::         one to three, shown one at a time
  ::: {.solution}              the reference kernel (its first ```{.python} block) and why
  :::
  ```{.python .check}          sizes, inputs, expected outputs, launch shape, budgets
  ```
  :::

`.hint`, `.solution` and `exercise=` are quarto-live's words. In HTML the div becomes a
<section class="exercise"> holding the statement, the starter (a highlighted code block that
assets/js/exercises.js turns into an editor when the reader reaches it), the buttons, a live
results region, the hints and solution (hidden until asked for), and the page data: the check's
source and the reference's counts, measured now by `python3 -m calc.exercises page <chapter>`,
which also stops the build (file:line) if the reference fails its own check or the starter
passes it. The first exercise of a page carries its stylesheet and a loader of a few hundred
bytes; the editor and Python load only when an exercise comes near the screen. (The index
page's "Your exercises" block, calc.exercises.progress_html, loads exercise-progress.js.)

Every other format (typst, EPUB, Quarto's others) gets the statement and the starter, then the
hints and the solution as collapsed `callout-tip` boxes (print shows them open, as it does every
callout); the Solutions appendix prints each reference kernel again with its counts. The check
is never printed. Run at `pre-ast`, so that Quarto then reads the callouts as the author's own.
]]

local PYTHON = os.getenv("BOOK_PYTHON") or "python3"
local project = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "project.lua" }))(PANDOC_SCRIPT_FILE)
local is_html = FORMAT:match("html") ~= nil
local page, root = "", ""
local data = nil        -- {id: page data} of this page's exercises, asked for once
local first = true

local function fail(message, needle)
  project.fail("exercise.lua", message, page, needle)
end

local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local function raw(text) return pandoc.RawBlock("html", text) end

local function page_data()
  if data then return data end
  local ok, out = pcall(pandoc.system.with_working_directory, project.root, function()
    return pandoc.pipe(PYTHON, { "-m", "calc.exercises", "page", page, "--errors-as-json" }, "")
  end)
  if not ok then fail("python3 -m calc.exercises page " .. page .. " failed: " .. tostring(out), ".exercise") end
  local answer = pandoc.json.decode(out, false)
  if answer.errors then
    -- a reference that fails its check, a starter that passes, a check with an unknown key:
    -- the first, at its file and line (project.fail's format, which bookbuild reads)
    local first = answer.errors[1]
    local text = "exercise.lua: " .. first[1] .. ":" .. math.floor(first[2]) .. ": " .. first[3]
    for k = 2, #answer.errors do
      local e = answer.errors[k]
      io.stderr:write("exercise.lua: " .. e[1] .. ":" .. math.floor(e[2]) .. ": " .. e[3] .. "\n")
    end
    io.stderr:write(text .. "\n")
    assert(false, text)
  end
  data = answer
  return data
end

local function has(el, class) return el.classes and el.classes:includes(class) end

--- The exercise's parts: statement blocks, the starter block, hint divs, the solution div.
local function parts(div)
  local p = { statement = pandoc.Blocks({}), hints = {} }
  for _, b in ipairs(div.content) do
    if b.t == "CodeBlock" and has(b, "starter") then p.starter = b
    elseif b.t == "CodeBlock" and has(b, "check") then p.check = b
    elseif b.t == "Div" and has(b, "hint") then table.insert(p.hints, b)
    elseif b.t == "Div" and has(b, "solution") then p.solution = b
    else p.statement:insert(b) end
  end
  if not p.starter then fail("exercise #" .. div.identifier .. " has no ```{.python .starter} block", div.identifier) end
  if not p.solution then fail("exercise #" .. div.identifier .. " has no ::: {.solution}", div.identifier) end
  if not p.check then fail("exercise #" .. div.identifier .. " has no ```{.python .check} block", div.identifier) end
  return p
end

local function starter_block(code, id)
  return pandoc.CodeBlock(code.text, pandoc.Attr(id .. "-starter", { "python", "exercise-starter" }))
end

--- The loader: when an exercise comes near the screen, the editor's script and the page's
--- exercise code are fetched (assets/js/exercises.js), once; nothing before. On a page with
--- widgets, not before their runtime has started ("widgets:runtime-settled", widgets-host.js):
--- the editor's 370 kB of script and the exercises' own Python otherwise take the CPU the
--- widgets' start needs (the roofline widget, landed on, went live 1.3x later on two cores).
local function loader()
  local src = root .. "assets/js/exercises.js"
  return raw('<link rel="stylesheet" href="' .. root .. 'assets/css/exercises.css">\n'
    .. '<script>(function(){var d=document,load=function(){if(d.querySelector("script[data-exercises]"))return;'
    .. 'var s=d.createElement("script");s.type="module";s.src="' .. src .. '";s.dataset.exercises="";d.head.appendChild(s)};'
    .. 'var go=function(){var W=window.BookWidgets;if(!d.querySelector(".widget[data-widget]")||W&&(W.runtimeSettled||W.phase==="failed")){load();return}'
    .. 'd.addEventListener("widgets:runtime-settled",load,{once:true});setTimeout(load,15000)};'
    .. 'var start=function(){var x=d.querySelectorAll("section.exercise");if(!("IntersectionObserver" in window)){go();return}'
    .. 'var o=new IntersectionObserver(function(es){if(es.some(function(e){return e.isIntersecting})){o.disconnect();go()}},{rootMargin:"600px 0px"});'
    .. 'x.forEach(function(e){o.observe(e)})};'
    .. 'if(d.readyState==="loading")d.addEventListener("DOMContentLoaded",start);else start()})();</script>')
end

local function html(div)
  local id = div.identifier
  local p = parts(div)
  local info = page_data()[id]
  if not info then fail("exercise #" .. id .. " was not found by calc.exercises in " .. page, id) end
  local out = pandoc.Blocks({})
  if first then out:insert(loader()); first = false end
  local title = info.title or "Exercise"
  out:insert(raw('<section class="exercise" id="' .. esc(id) .. '" data-exercise="' .. esc(id)
    .. '" aria-labelledby="' .. esc(id) .. '-label">'))
  out:insert(raw('<p class="exercise-label" id="' .. esc(id) .. '-label"><span class="exercise-kind">Exercise</span> '
    .. esc((title:gsub("^Exercise:%s*", ""):gsub("^%l", string.upper))) .. '</p>'))
  -- a heading written in the statement duplicates the label: the label is the exercise's title
  local statement = pandoc.Blocks({})
  for _, b in ipairs(p.statement) do
    if not (b.t == "Header" and pandoc.utils.stringify(b) == title) then statement:insert(b) end
  end
  out:insert(pandoc.Div(statement, pandoc.Attr("", { "exercise-statement" })))
  out:insert(raw('<div class="exercise-editor" data-for="' .. esc(id) .. '">'
    .. '<p class="exercise-keys" id="' .. esc(id) .. '-keys">Your kernel, in Numba\'s CUDA Python (the same '
    .. 'text runs on an NVIDIA GPU under <code>@cuda.jit</code>); <code>+ - * /</code> on floats count FLOPs. '
    -- keys a touch screen has not: left out there (exercises.css)
    .. '<span class="exercise-keys-tab">In the editor, <kbd>Tab</kbd> indents once you have typed; '
    .. 'press <kbd>Esc</kbd> then <kbd>Tab</kbd> to move on. </span>Run tries size ' .. esc(info.run)
    .. '; Check tries every size and the budgets.</p>'))
  out:insert(starter_block(p.starter, id))
  out:insert(raw('</div>'))
  local hints = #p.hints
  out:insert(raw('<div class="exercise-actions" role="group" aria-label="Exercise controls">'
    .. '<button type="button" class="exercise-run" disabled>Run</button>'
    .. '<button type="button" class="exercise-check" disabled>Check</button>'
    .. '<button type="button" class="exercise-stop" disabled>Stop</button>'
    .. '<button type="button" class="exercise-reset" disabled>Start over</button>'
    .. '<button type="button" class="exercise-hint-next" disabled data-hints="' .. hints .. '">Hint (1 of ' .. hints .. ')</button>'
    .. '<button type="button" class="exercise-show-solution" disabled>Solution</button>'
    .. '<button type="button" class="exercise-gpu" disabled aria-describedby="' .. esc(id) .. '-gpu-note">'
    .. 'Run on an NVIDIA GPU</button>'
    .. '</div>'
    .. '<p class="exercise-gpu-note" id="' .. esc(id) .. '-gpu-note">Run on an NVIDIA GPU saves a Python script '
    .. '(numba-cuda and numpy) with your kernel, this check\'s inputs and the Nsight Compute command '
    .. 'for the counts shown here.</p>'))
  out:insert(raw('<div class="exercise-status" role="status" aria-live="polite"><p class="exercise-message">'
    .. 'The editor and the simulator load when you reach this exercise.</p></div>'
    .. '<div class="exercise-results"></div>'))
  for k, h in ipairs(p.hints) do
    local body = pandoc.Blocks({ raw('<p class="exercise-hint-title"><strong>Hint ' .. k .. '</strong></p>') })
    body:extend(h.content)
    out:insert(pandoc.Div(body, pandoc.Attr(id .. "-hint-" .. k, { "exercise-hint" }, { hidden = "" })))
  end
  local sol = pandoc.Blocks({ raw('<p class="exercise-hint-title"><strong>Solution</strong></p>') })
  sol:extend(p.solution.content)
  out:insert(pandoc.Div(sol, pandoc.Attr(id .. "-solution", { "exercise-solution" }, { hidden = "" })))
  local payload = pandoc.json.encode(info):gsub("</", "<\\/")
  out:insert(raw('<script type="application/json" class="exercise-data">' .. payload .. '</script>'))
  out:insert(raw('</section>'))
  return out
end

local function callout(title, content, collapse)
  local attrs = { title = title }
  if collapse then attrs.collapse = "true" end
  return pandoc.Div(content, pandoc.Attr("", { "callout-tip" }, attrs))
end

local function other(div)
  local id = div.identifier
  local p = parts(div)
  local out = pandoc.Blocks({})
  local titled = false
  for _, b in ipairs(p.statement) do
    -- the exercise's heading is its title, not a numbered section of the chapter
    if b.t == "Header" and not titled then
      titled = true
      out:insert(pandoc.Para({ pandoc.Strong(b.content) }))
    else
      out:insert(b)
    end
  end
  out:insert(starter_block(p.starter, id))
  for k, h in ipairs(p.hints) do
    out:insert(callout(#p.hints > 1 and ("Hint " .. k) or "Hint", h.content, true))
  end
  out:insert(callout("Solution", p.solution.content, true))
  return pandoc.Div(out, pandoc.Attr(id, { "exercise-print" }))
end

local function Div(div)
  if not div.classes:includes("exercise") then return nil end
  if is_html then return html(div) end
  return other(div)
end

return {
  { Meta = function(meta) page = project.page(meta); root = project.offset(meta) end },
  { Div = Div },
}
