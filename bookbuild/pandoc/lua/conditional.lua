-- Quarto's conditional content: `.content-visible` / `.content-hidden` divs and spans with
-- `when-format` / `unless-format`, matched with Quarto's format aliases
-- (https://quarto.org/docs/authoring/conditional.html). The EPUB is written in two steps (pages
-- to JSON, then the book to epub3), so its pages say which format they are for in `book-format`.

local format = FORMAT

local ALIASES = {
  html = {"html", "html4", "html5", "epub", "epub2", "epub3", "revealjs"},
  ["html:js"] = {"html", "html4", "html5", "revealjs"},
  epub = {"epub", "epub2", "epub3"},
  pdf = {"latex", "beamer"},
  latex = {"latex", "beamer"},
  typst = {"typst"},
}

local function matches(name)
  for _, f in ipairs(ALIASES[name] or {name}) do
    if format == f then return true end
  end
  return false
end

local function any_matches(list)
  for name in list:gmatch("[^%s,]+") do
    if matches(name) then return true end
  end
  return false
end

local function visible(el)
  local when, unless = el.attributes["when-format"], el.attributes["unless-format"]
  local hit = (not when or any_matches(when)) and (not unless or not any_matches(unless))
  if el.classes:includes("content-hidden") then
    if not when and not unless then return false end
    return not hit
  end
  return hit
end

local function conditional(el)
  if not (el.classes:includes("content-visible") or el.classes:includes("content-hidden")) then return nil end
  if not visible(el) then return {} end
  return el.content
end

return {
  {Meta = function(meta) if meta["book-format"] then format = pandoc.utils.stringify(meta["book-format"]) end end},
  {Div = conditional, Span = conditional},
}
