--[[ predict.lua: a Predict box's controls, written into the HTML page.

A `::: {.callout-tip .predict}` whose body holds a list is a question with choices: the list
becomes radio buttons in a fieldset, with "Lock in my answer" below. Without a list the box
gets a "Your prediction" text field and "Commit". The next callout after it, if collapsible, is
its reveal: it gets the class `predict-reveal`, by which the page's stylesheet says it is locked.
assets/js/predict.js gives these controls their behaviour (lock, reveal, remember the answer).

Written here rather than by the script, the controls are in the page's first layout: nothing
below a Predict box moves when the script runs (it once moved the widget chapters by up to 0.3
of a screen). Run at `pre-ast`, so that Quarto then reads the box as the callout it is. In print
and EPUB the list stays a list.
]]

if not FORMAT:match("html") then return {} end

local count = 0

local function raw(text) return pandoc.RawBlock("html", text) end

local function is_callout(block)
  if block.t ~= "Div" then return false end
  for _, class in ipairs(block.classes) do
    if class == "callout" or class:match("^callout%-") then return true end
  end
  return false
end

local function collapsible(block)
  local collapse = block.attributes["collapse"]
  return collapse == "true" or collapse == "false"
end

local ACTIONS_CHOICES = '<div class="predict-actions">'
  .. '<button type="button" class="predict-commit" disabled>Lock in my answer</button>'
  .. '<button type="button" class="predict-change" hidden>Change my answer</button>'
  .. '<p class="predict-status" role="status"></p></div>'

local function actions_text(n)
  local id = "predict-text-" .. n
  return '<div class="predict-actions">'
    .. '<label for="' .. id .. '">Your prediction</label>'
    .. '<input type="text" id="' .. id .. '" class="predict-text" autocomplete="off">'
    .. '<button type="button" class="predict-commit">Commit</button>'
    .. '<button type="button" class="predict-change" hidden>Change my prediction</button>'
    .. '<p class="predict-status" role="status"></p></div>'
end

local function choices(list, n, question)
  local out = pandoc.Blocks({})
  if question then
    out:insert(raw('<fieldset class="predict-choices" aria-labelledby="' .. question .. '">'))
  else
    out:insert(raw('<fieldset class="predict-choices"><legend>Your prediction</legend>'))
  end
  for i, item in ipairs(list.content) do
    local label = pandoc.Inlines({ pandoc.RawInline("html", '<label class="predict-choice"><input type="radio" name="predict-'
      .. n .. '" value="' .. (i - 1) .. '"><span class="predict-option">') })
    label:extend(pandoc.utils.blocks_to_inlines(item))
    label:insert(pandoc.RawInline("html", "</span></label>"))
    out:insert(pandoc.Plain(label))
  end
  out:insert(raw("</fieldset>"))
  out:insert(raw(ACTIONS_CHOICES))
  return out
end

local function predict(div)
  local n = count
  count = count + 1
  local body, question, listed = pandoc.Blocks({}), nil, false
  for _, b in ipairs(div.content) do
    if not question and b.t == "Para" then
      question = "predict-q-" .. n
      body:insert(pandoc.Div({ b }, pandoc.Attr(question)))
    elseif not listed and (b.t == "BulletList" or b.t == "OrderedList") then
      listed = true
      body:extend(choices(b, n, question))
    else
      body:insert(b)
    end
  end
  if not listed then body:insert(raw(actions_text(n))) end
  div.content = body
  return div
end

function Blocks(blocks)
  local changed = false
  for i, b in ipairs(blocks) do
    if b.t == "Div" and b.classes:includes("predict") then
      blocks[i] = predict(b)
      changed = true
      for j = i + 1, #blocks do
        local next = blocks[j]
        if is_callout(next) then
          if collapsible(next) and not next.classes:includes("predict") then
            next.classes:insert("predict-reveal")
          end
          break
        end
      end
    end
  end
  if changed then return blocks end
end
