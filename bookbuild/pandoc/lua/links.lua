-- Paths for the page being written: figures from the build's figure store,
-- links between .qmd sources, and citation links to the references page.

local root, page, refs_page, fig_base = "", "", nil, "figures/"

local function Meta(meta)
  root = pandoc.utils.stringify(meta["book-root"] or "")
  page = pandoc.utils.stringify(meta["book-page"] or "")
  refs_page = meta["book-refs-page"] and pandoc.utils.stringify(meta["book-refs-page"])
  if meta["book-figures"] then fig_base = pandoc.utils.stringify(meta["book-figures"]) end
end

local function Image(img)
  local rest = img.src:match("^bookfig:(.*)$")
  if not rest then return nil end
  if FORMAT:match("html") then
    img.src = root .. "figures/" .. rest
    -- An SVG's size, so that the text around it keeps its place while it loads (no layout shift).
    local file = rest:match("%.svg$") and not img.attributes.width and io.open(fig_base .. rest, "r")
    if file then
      local head = (file:read(4096) or ""):match("<svg[^>]*>") or ""
      file:close()
      local px = { [""] = 1, px = 1, pt = 4 / 3 }
      local w, wu = head:match('%swidth="([%d.]+)(%a*)"')
      local h, hu = head:match('%sheight="([%d.]+)(%a*)"')
      if w and h and px[wu] and px[hu] then
        img.attributes.width = tostring(math.floor(tonumber(w) * px[wu] + 0.5))
        img.attributes.height = tostring(math.floor(tonumber(h) * px[hu] + 0.5))
      end
    end
  else
    img.src = fig_base .. rest
  end
  if img.attributes["fig-alt"] then
    img.attributes["alt"] = img.attributes["fig-alt"]
    img.attributes["fig-alt"] = nil
  end
  return img
end

local function Link(link)
  local t = link.target
  if t:match("^%a[%w+.-]*:") then return nil end -- absolute URL
  local file, anchor = t:match("^([^#]*%.qmd)(#?.*)$")
  if file and not FORMAT:match("html") and anchor ~= "" then
    link.target = anchor -- the PDF is one document
    return link
  end
  if file then
    link.target = file:gsub("%.qmd$", ".html") .. anchor
    return link
  end
  if refs_page and page ~= refs_page and t:match("^#ref%-") and FORMAT:match("html") then
    link.target = root .. refs_page .. t
    return link
  end
end

local function Div(div)
  -- citeproc's bibliography on a page that is not the references page: the citations
  -- stay linked (to the references page, above) and the list itself goes
  if div.identifier == "refs" and refs_page and page ~= refs_page then return {} end
end

return {{Meta = Meta}, {Image = Image, Link = Link, Div = Div}}
