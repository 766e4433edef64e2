// Re-links the election's bulletin board from genesis in the browser (spec/80.2, spec/80.9):
// every entry's payload is hashed with WebCrypto SHA-256 and linked to the hash before it, the
// way `votum board check` does; the first entry that does not chain is named.
"use strict";
(() => {
  const box = document.getElementById("chain-check");
  if (!box || !window.crypto || !window.crypto.subtle || !window.TextEncoder) return;
  box.hidden = false;
  const M = JSON.parse(document.getElementById("messages").textContent);
  const say = (key, values) => M[key].replace(/\{(\w+)\}/g, (_, k) => String(values[k]));
  const election = box.dataset.election;
  const button = document.getElementById("relink");
  const bar = document.getElementById("relink-progress");
  const status = document.getElementById("relink-status");
  const utf8 = new TextEncoder();
  const PAGE = 500;

  const u64 = (n) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt(n));
    return b;
  };
  // one transcript field (spec/20.1): u64be(len(label)) ‖ label ‖ u64be(len(value)) ‖ value
  const field = (label, value) => {
    const l = utf8.encode(label);
    const v = typeof value === "string" ? utf8.encode(value) : value;
    return [u64(l.length), l, u64(v.length), v];
  };
  const sha256 = async (parts) => {
    let n = 0;
    for (const p of parts) n += p.length;
    const all = new Uint8Array(n);
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  };
  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const transcript = (tag, fields) => sha256([...field("domain", tag), ...fields.flat()]);

  const genesis = () => transcript("votum/v1/board-genesis", [field("election", election)]);
  const link = (prev, seq, kind, name, digest) => transcript("votum/v1/board", [
    field("prev", prev), field("seq", u64(seq)), field("kind", kind), field("name", name), field("payload", digest),
  ]);

  const flag = (seq) => {
    bar.value = seq;
    const row = document.getElementById("entry-" + seq);
    if (row) row.classList.add("broken");
  };
  const finish = (text, ok) => {
    status.textContent = text;
    status.className = ok ? "ok" : "bad";
    box.dataset.result = ok ? "ok" : "broken";
    button.disabled = false;
  };

  async function relink() {
    button.disabled = true;
    status.className = "";
    delete box.dataset.result;
    let prev = await genesis();
    let expected = 0;
    let after = -1;
    let head = null;
    for (;;) {
      const r = await fetch(`/v1/elections/${encodeURIComponent(election)}/board?after=${after}&limit=${PAGE}`,
                            { headers: { Accept: "application/json" } });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      const page = await r.json();
      head = page.head;
      bar.max = head.seq + 1;
      const digests = await Promise.all(page.entries.map((e) => sha256([utf8.encode(e.payload)])));
      for (let i = 0; i < page.entries.length; i++) {
        const e = page.entries[i];
        if (e.seq !== expected) {
          flag(expected);
          return finish(say("board.gap", { seq: expected, got: e.seq }), false);
        }
        const h = await link(prev, e.seq, e.kind, e.name, digests[i]);
        if (hex(h) !== e.hash) {
          flag(e.seq);
          return finish(say("board.broken", { seq: e.seq, kind: e.kind, name: e.name }), false);
        }
        prev = h;
        expected += 1;
      }
      bar.value = expected;
      status.textContent = say("board.checking", { done: expected, total: head.seq + 1 });
      const last = page.entries.length ? page.entries[page.entries.length - 1].seq : null;
      if (last === null || last >= head.seq) break;
      after = last;
    }
    if (expected !== head.seq + 1 || hex(prev) !== head.hash) {
      return finish(say("board.head_mismatch", { head: head.hash.slice(0, 16) }), false);
    }
    finish(say("board.ok", { total: expected, head: head.hash.slice(0, 16) }), true);
  }

  button.addEventListener("click", () => {
    relink().catch((err) => finish(say("board.failed", { error: err.message }), false));
  });
})();
