"""The offline step's page edit (bookbuild/html/offline link_manifest): every page names the web app
manifest once, whatever its scripts say."""
from bookbuild.html.offline import link_manifest

LOOKS_FOR_IT = '<script>var m=document.querySelector(\'link[rel="manifest"]\')</script>'


def test_every_page_names_the_manifest_once_even_one_whose_script_looks_for_it(tmp_path):
    (tmp_path / "chapters").mkdir()
    page = tmp_path / "chapters" / "a.html"
    page.write_text(f"<html><head>{LOOKS_FOR_IT}</head><body></body></html>", encoding="utf-8")
    index = tmp_path / "index.html"
    index.write_text('<html><head><link rel="manifest" href="manifest.webmanifest"></head></html>', encoding="utf-8")
    link_manifest(tmp_path)
    link_manifest(tmp_path)                              # idempotent
    text = page.read_text(encoding="utf-8")
    assert text.count('<link rel="manifest" href="../manifest.webmanifest">') == 1, text
    assert index.read_text(encoding="utf-8").count("<link") == 1
