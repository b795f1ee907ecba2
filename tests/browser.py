"""Open an HTML page in headless Chromium and say what a reader would see: script errors, each image's size.

A copy of the page gets a small script that records ``window.onerror``, ``console.error`` and failed resource
loads, and after ``load`` writes each ``<img>``'s natural and rendered size into a ``<pre id="tw-probe">``;
``chromium --dump-dom`` prints the DOM once the page settles, and the console lines Chromium logs on stderr
are read as well. No driver, no extra package: the ``chromium`` command alone.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path

PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(e.message ? "error: " + e.message : "failed to load: " + (e.target.src || e.target.href || e.target.tagName));
  }, true);
  var original = console.error;
  console.error = function () { errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); original.apply(console, arguments); };
  window.addEventListener("load", function () {
    var images = Array.prototype.map.call(document.images, function (img) {
      var box = img.getBoundingClientRect();
      return {alt: img.alt, natural: [img.naturalWidth, img.naturalHeight], rendered: [box.width, box.height],
              complete: img.complete};
    });
    var out = document.createElement("pre");
    out.id = "tw-probe";
    out.textContent = JSON.stringify({errors: errors, images: images, width: document.documentElement.clientWidth});
    document.body.appendChild(out);
  });
})();
</script>"""

# Chromium's console lines on stderr: ``[...:INFO:CONSOLE:4] "message", source: file:///... (4)`` (older versions
# write ``CONSOLE(4)``); the level is not the page's, so only uncaught errors are taken from here.
_CONSOLE = re.compile(r'CONSOLE[(:]\d+\)?\] "(?P<message>.*)", source: ')


def uncaught_errors(stderr: str) -> list[str]:
    """The uncaught script errors among the console lines Chromium wrote to ``stderr`` (a second source, for
    what the probe could not catch)."""
    found = (_CONSOLE.search(line) for line in stderr.splitlines())
    return [f"console: {m.group('message')}" for m in found if m and "Uncaught" in m.group("message")]


def chromium() -> str | None:
    """The Chromium command on PATH (``chromium`` or ``chromium-browser``), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Image:
    alt: str
    natural: tuple[int, int]
    rendered: tuple[float, float]


@dataclass
class PageView:
    """What the browser made of a page: its DOM after load, the errors, the images and the viewport width."""

    dom: str
    errors: list[str] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    width: int = 0

    def broken_images(self) -> list[Image]:
        return [i for i in self.images if min(i.natural) <= 0 or min(i.rendered) <= 0]


def open_page(page: Path, *, width: int = 1200, timeout: float = 60.0) -> PageView:
    """Load ``page`` (a copy with the probe script, next to it so relative paths still resolve) in headless
    Chromium at ``width`` pixels and return what it saw. The probe's own output element is not in ``dom``."""
    command = chromium()
    if command is None:
        raise RuntimeError("chromium is not installed")
    text = page.read_text(encoding="utf-8")
    head = re.search(r"<head[^>]*>", text, flags=re.IGNORECASE)
    at = head.end() if head else 0
    probed = page.with_name(f".probe-{page.name}")
    probed.write_text(text[:at] + PROBE + text[at:], encoding="utf-8")
    try:
        done = subprocess.run(
            [command, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--enable-logging=stderr",
             "--v=0", f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom",
             probed.resolve().as_uri()],
            capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        probed.unlink(missing_ok=True)
    found = re.search(r'<pre id="tw-probe">(.*?)</pre>', done.stdout, flags=re.DOTALL)
    if found is None:
        raise RuntimeError(f"the page never finished loading in chromium (exit {done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    probe = json.loads(unescape(found.group(1)))
    errors = list(probe["errors"])
    errors += [e for e in uncaught_errors(done.stderr) if not any(e.removeprefix("console: ") in seen
                                                                   for seen in errors)]
    images = [Image(i["alt"], tuple(i["natural"]), tuple(i["rendered"])) for i in probe["images"]]
    dom = done.stdout[:found.start()] + done.stdout[found.end():]
    return PageView(dom=dom, errors=errors, images=images, width=int(probe["width"]))
