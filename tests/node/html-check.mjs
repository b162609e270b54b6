// Loads a cudawatch HTML report in headless Chromium and prints, as JSON,
// what a reader sees: the title, the checklist rows, the findings, the
// coalescing chart's bars, and every request or console message the page
// made. tests/integration/html.rs asserts on it.
//
//   node check.mjs REPORT.html [SCREENSHOT.png|-] [VIEWPORT-WIDTH]
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [file, screenshot, width] = process.argv.slice(2);
const url = pathToFileURL(resolve(file)).href;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // This machine's network is closed: without these Chromium keeps trying
  // to reach Google at start-up.
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: Number(width || 1200), height: 900 } });
  const requests = [];
  const console_messages = [];
  const dialogs = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => console_messages.push(m.text()));
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(url);
  const shown = await page.evaluate(() => {
    const text = (el) => (el ? el.innerText.trim() : null);
    const visible = (el) => !!el && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
    return {
      title: document.title,
      verdict: [...document.querySelectorAll(".verdict")].map(text),
      checklist: [...document.querySelectorAll("#checklist tbody tr")].map((tr) => ({
        id: tr.dataset.check,
        check: text(tr.cells[0]),
        status: text(tr.cells[1]),
        evidence: text(tr.cells[2]),
        visible: visible(tr),
      })),
      stages: [...document.querySelectorAll("#stages tbody tr")].map((tr) => [text(tr.cells[0]), text(tr.cells[1])]),
      findings: [...document.querySelectorAll("article.finding")].map((a) => ({
        heading: text(a.querySelector("h3")),
        kernel: text(a.querySelector("dd code")),
        snippet_lines: a.querySelectorAll("pre.snippet span").length,
        highlighted: text(a.querySelector("pre.snippet .hit")),
        visible: visible(a),
      })),
      chart: [...document.querySelectorAll("svg.chart g.kernel")].map((g) => ({
        kernel: g.dataset.kernel,
        label: g.querySelector("text.label")?.textContent,
        wasted_width: g.querySelector("rect.wasted")?.getBoundingClientRect().width ?? null,
        wasted_pct: g.querySelector("rect.wasted")?.dataset.pct ?? null,
      })),
      // Words of the stage and check names drawn over two lines: a name
      // broken mid-word ("memche" / "ck") reads as two.
      split_words: [...document.querySelectorAll("#stages tbody td:first-child, #checklist tbody td:first-child")]
        .flatMap((td) => {
          const node = td.firstChild;
          if (!node || node.nodeType !== Node.TEXT_NODE) return [];
          const split = [];
          let at = 0;
          for (const word of node.textContent.split(" ")) {
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + word.length);
            const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            if (word && lines.size > 1) split.push(word);
            at += word.length + 1;
          }
          return split;
        }),
      scripts: document.querySelectorAll("script").length,
      body_text: document.body.innerText,
    };
  });
  if (screenshot && screenshot !== "-") await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify({ url, requests, console: console_messages, dialogs, ...shown }));
} finally {
  await browser.close();
}
