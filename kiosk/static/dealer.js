/* The dealer's screen: draws the table from the server's state, sends the dealer's actions.
 *
 * State arrives by server-sent events (every version, in order); every action is a JSON
 * POST carrying the CSRF token and answers with the new state, so the screen never waits
 * for the stream to show the dealer's own action.  No framework, no download: this file
 * is all there is.
 *
 * A state carries its kiosk process's "run" (new at every start) beside its version: a
 * restarted kiosk counts versions from 1 again, so a state from another run is drawn
 * whatever its version, and the versions are counted afresh from it.
 */
(function () {
  "use strict";

  // "6 of 5 cards" read like a count still short; a sixth card is one too many.
  function handCount(n) {
    if (!n) return "";
    return n > 5 ? n + " cards: " + (n - 5) + " too many" : n + " of 5 cards";
  }

  const area = document.getElementById("table-area");
  const urls = area.dataset;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const STALE_MS = 4000;
  const REQUEST_MS = 20000;   // an action the kiosk has not answered by then has failed

  let state = null;
  let version = 0;
  const retiredRuns = new Set();   // runs of kiosk processes that have since restarted
  let drawPending = false;
  let lastMessage = Date.now();
  let source = null;
  let correcting = null;   // {seat, code, round, settled}
  let chosen = null;       // the card picked in the 52-card grid
  let addingSeat = null;
  let addingRound = null;
  let betSeat = null;
  let betKind = null;
  let betMultiple = 1;

  // ------------------------------------------------------------------ helpers

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function seatTitle(name) { return name === "banker" ? "Banker" : "Seat " + name; }

  // Thousands grouped: under the camera a dealer must not read 17100 as 1710.
  function grouped(text) {
    const [whole, cents] = String(text).split(".");
    const sign = whole.startsWith("-") ? "-" : "";
    return sign + whole.replace("-", "").replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (cents === undefined ? "" : "." + cents);
  }

  function money(text) { return grouped(text) + " " + urls.currency; }

  // Only a grab-the-banker table sends bids and multiples; every other table's screen is unchanged.
  function grab() { return Boolean(state && state.table.bet_multiples); }

  // On a round still on the table (settled or voided) the bet, bid and stack chips are the next
  // round's (chips_for), open or closed by the next deal's first card: marked so, not read as its own.
  function nextBets() {
    const r = state.round;
    return r.chips_for !== r.no && (r.state === "settled" || r.state === "void");
  }

  // Bets close at the next deal's first card, before its round starts (QA50 dealing3 H1).
  function nextBetsWords(r) {
    return r.bets_open ? "Bets are open for round " + (r.no + 1)
      : "Bets for round " + (r.no + 1) + " are closed: its cards are on the table";
  }

  // Only a table whose banker pays as far as a stack goes sends the stack (banker.cover).
  function covered() { return Boolean(state && state.table.banker_cover); }

  // One party's side of an adjustment, in the kiosk's words (kiosk.adjustment_words.party_words): "COLLECT
  // 195.00 USD from Seat 3"; where a player banks, "Seat 1 is paid 500.00 USD", "Banker pays …".
  function adjustText(a) { return a.text; }

  // A seat's part in its round's adjustment: "outstanding" until recorded, then "paid" or "waived".
  function adjustState(adj, seatName) {
    if (!adj) return null;
    if (adj.outstanding.some((o) => o.seat === seatName)) return "outstanding";
    const done = adj.records.filter((r) => r.seats.some((o) => o.seat === seatName));
    return done.length ? done[done.length - 1].action : null;
  }

  // A line as the seat box and the history dialog write it: "WIN +47.50", "+47.50" without an
  // outcome, "—" where the server does not know it.
  function lineText(outcome, net) {
    return (outcome ? outcome.toUpperCase() + " " : "")
      + (net === null || net === undefined ? "—" : (Number(net) > 0 ? "+" : "") + grouped(net));
  }

  function betText(bet) {
    return money(bet.amount) + " · " + bet.kind + (bet.multiple ? " ×" + bet.multiple : "");
  }

  // A request that never reached the kiosk (or was never answered) throws an error marked
  // unreachable: the browser's own words for it ("Failed to fetch") tell a dealer nothing.
  async function post(url, body) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), REQUEST_MS);
    let response;
    let data = {};
    try {
      response = await fetch(url, {
        method: "POST", credentials: "same-origin", signal: abort.signal,
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "application/json" },
        body: JSON.stringify(body || {}),
      });
      try { data = await response.json(); } catch (e) { data = { error: "the kiosk answered " + response.status }; }
    } catch (e) {
      const err = new Error(abort.signal.aborted ? "the kiosk did not answer" : "the kiosk could not be reached");
      err.unreachable = true;
      err.timedOut = abort.signal.aborted;
      throw err;
    } finally {
      clearTimeout(timer);
    }
    if (response.status === 401) { window.location = urls.login; throw new Error(data.error); }
    if (data.state) apply(data.state);
    if (!response.ok) {
      const err = new Error(data.error || ("the kiosk answered " + response.status));
      err.status = response.status;
      throw err;
    }
    return data;
  }

  // What a failed action says: what did not happen, and what to do.  The kiosk's own refusals
  // ("supervisor PIN not recognised …") are plain already and are shown as they are.
  function failure(err, notDone, button) {
    if (!err.unreachable) return err.message;
    const again = "tap " + button + " again";
    return err.timedOut
      ? "No answer from the kiosk. If the screen has not changed, " + again + "."
      : notDone + ": the kiosk could not be reached. Check the link, then " + again + ".";
  }

  // One request per dialog (or per side of the screen) at a time: a second tap while the first
  // is out does nothing, and the button is usable again as soon as the kiosk answers or the
  // request fails.  Marked busy rather than disabled, so a button pressed by keyboard keeps
  // the focus.
  async function once(group, button, send) {
    if (!group || group.dataset.busy) return;
    group.dataset.busy = "1";
    const focused = Boolean(button) && document.activeElement === button;
    if (button) button.setAttribute("aria-busy", "true");
    try {
      await send();
    } finally {
      delete group.dataset.busy;
      if (button) button.removeAttribute("aria-busy");
      if (state) drawActions();
      // Pressed from the keyboard: the focus stays on it, or (Settle once settled) goes on to the
      // next step.  A dialog's button is left to the dialog, which gives it back to its opener.
      if (focused && !button.closest("dialog") && !openDialogNode()) {
        if (usable(button)) { if (lostFocus()) button.focus({ preventScroll: true }); }
        else if (lostFocus() || document.activeElement === button) focusNextAction();
      }
    }
  }

  function toast(message, kind, ms) {
    let box = $("toast");
    if (!box) { box = el("div", "toast"); box.id = "toast"; box.setAttribute("role", "status"); document.body.appendChild(box); }
    box.textContent = message;
    // over the round strip, left of Show camera, as tall as the strip (kiosk.css .toast)
    const strip = $("history").getBoundingClientRect();
    const right = Math.min(strip.right, $("camera-toggle").getBoundingClientRect().left) - 8;
    box.style.left = (strip.left + right) / 2 + "px";
    box.style.bottom = Math.max(0, window.innerHeight - strip.bottom + 2) + "px";
    box.style.maxWidth = Math.max(200, right - strip.left - 8) + "px";
    box.style.minHeight = Math.max(0, strip.height - 4) + "px";
    box.className = "toast show " + (kind || "");
    clearTimeout(box._t);
    box._t = setTimeout(() => { box.className = "toast"; }, ms || (kind === "bad" ? 9000 : 5000));
  }

  // A dialog's error line; a PIN lockout's "wait N s" counts down rather than stand still.
  function showError(node, message) {
    if (!node) return;
    clearInterval(node._countdown);
    node.textContent = message || "";
    const wait = /wait (\d+) s\b/.exec(message || "");
    if (!wait) return;
    const until = Date.now() + Number(wait[1]) * 1000;
    node._countdown = setInterval(() => {
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left <= 0) {
        clearInterval(node._countdown);
        node.textContent = "The PIN can be typed again now.";
      } else {
        node.textContent = message.replace(wait[0], "wait " + left + " s");
      }
    }, 1000);
  }

  // A wrong PIN is cleared from its field, which takes the focus for the next try.
  function pinRefused(err, field) {
    if (err.status !== 403 || !field || field.getClientRects().length === 0) return;
    field.value = "";
    field.focus();
  }

  // ------------------------------------------------------------------ focus
  // Every state redraws the seats, so the control that had the focus is a new node: it is found
  // again by its data-key (a card by seat and code, a bet chip by seat, a tile by round).

  function lostFocus() {
    const a = document.activeElement;
    // (a button of a dialog just closed still holds it until the browser moves it to the page)
    return !a || a === document.body || a === document.documentElement || !a.isConnected
      || Boolean(a.closest && a.closest("dialog:not([open])"));
  }

  function usable(node) {
    return Boolean(node && node.isConnected && !node.disabled && !node.hidden && node.getClientRects().length);
  }

  function openDialogNode() { return document.querySelector("dialog[open]"); }

  function byKey(key) {
    return key ? document.querySelector('[data-key="' + CSS.escape(key) + '"]') : null;
  }

  function focusKey(key, group) {
    let node = byKey(key);
    if (!usable(node) && group) {
      // the card was corrected (its code changed) or the slot filled: the seat's next control
      node = [...document.querySelectorAll('[data-key-group="' + CSS.escape(group) + '"]')].find(usable) || null;
    }
    if (!usable(node)) return false;
    node.focus({ preventScroll: true });
    return true;
  }

  // An action button that its own action made unavailable (Settle once settled, Same bets once
  // placed) hands the focus to the next step rather than drop it on the page.
  function focusNextAction() {
    const next = ["settle-btn", "repeat-btn", "clear-btn"].map($).find(usable)
      || [...document.querySelectorAll("[data-bet-seat]")].find(usable)
      || [$("void-btn"), $("camera-toggle")].find(usable);
    if (next) next.focus({ preventScroll: true });
  }

  // ------------------------------------------------------------------ drawing

  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

  // A card as the state draws one, from its code alone ("7D").
  function codeView(code) {
    const suit = code.slice(-1);
    return { code: code, rank: code.slice(0, -1), symbol: SUITS[suit] || suit, red: suit === "H" || suit === "D" };
  }

  function cardText(code) { const c = codeView(code); return c.rank + c.symbol; }

  // Cards the kiosk ignores as left over from the last round (after a restart, or a Next round
  // pressed with the cards still down) while they lie on the table: [seat, code] pairs.  One that
  // carries a third item (frames left to see it) has not been seen since the restart, so it is
  // not known to be on the table at all, and is not shown.  Shown while a round is dealt, where a
  // hand reads 4 of 5 because of one: the list changes without a new state when a left-over is
  // swept between rounds, so it would linger there after the card has gone.
  function staleCards(seatName) {
    const r = state.round || {};
    if (r.state !== "dealing" && r.state !== "complete") return [];
    const listed = r.stale_cards || [];
    return listed.filter((s) => s.length === 2 && s[0] === seatName).map((s) => s[1]);
  }

  function cardNode(card, seat, extra) {
    const node = el("button", "card " + (card.red ? "red" : "black") + (card.confirm ? " confirm" : "") + (extra || ""));
    node.type = "button";
    node.dataset.seat = seat;
    node.dataset.code = card.code;
    node.dataset.key = "card:" + seat + ":" + card.code;
    node.dataset.keyGroup = "seat:" + seat;
    node.setAttribute("aria-label", card.code + (card.confirm ? " (needs confirmation)" : ""));
    node.appendChild(el("span", "rank", card.rank));
    node.appendChild(el("span", "suit", card.symbol));
    if (card.confirm) node.appendChild(el("span", "flag", "?"));
    if (card.conf !== null && card.conf !== undefined) node.title = card.code + " · confidence " + Math.round(card.conf * 100) + "%";
    return node;
  }

  function handNode(seat) {
    const hand = el("div", "hand");
    const byCode = {};
    seat.cards.forEach((c) => { byCode[c.code] = c; });
    const r = seat.result;
    if (r && r.bull && r.bull.length === 3) {
      const bull = el("div", "group bull");
      r.bull.forEach((code) => bull.appendChild(cardNode(byCode[code], seat.name)));
      bull.appendChild(el("span", "group-label", "BULL"));
      const rest = el("div", "group rest");
      r.rest.forEach((code) => rest.appendChild(cardNode(byCode[code], seat.name)));
      rest.appendChild(el("span", "group-label", r.points === 10 ? "NIU" : String(r.points)));
      hand.appendChild(bull);
      hand.appendChild(rest);
    } else {
      const all = el("div", "group plain");
      const codes = r ? r.bull.concat(r.rest) : seat.cards.map((c) => c.code);
      codes.forEach((code) => all.appendChild(cardNode(byCode[code], seat.name)));
      const open = state.round.can_correct && state.round.state !== "settled";
      // A left-over the kiosk ignores is drawn, faded and marked, where the card it is not
      // counting would be: the dealer sees why the hand reads 4 of 5 (tap it to add it).
      const held = new Set(seat.cards.map((c) => c.code));
      const ghosts = staleCards(seat.name).filter((code) => !held.has(code)).slice(0, Math.max(0, 5 - seat.cards.length));
      ghosts.forEach((code) => {
        const c = codeView(code);
        const ghost = el("button", "card stale " + (c.red ? "red" : "black") + (open ? "" : " idle"));
        ghost.type = "button";
        ghost.dataset.seat = seat.name;
        ghost.dataset.add = "1";
        ghost.dataset.stale = code;
        ghost.dataset.key = "stale:" + seat.name + ":" + code;
        ghost.dataset.keyGroup = "seat:" + seat.name;
        ghost.disabled = !open;
        ghost.appendChild(el("span", "rank", c.rank));
        ghost.appendChild(el("span", "suit", c.symbol));
        ghost.appendChild(el("span", "stale-flag", "OLD"));
        const why = code + " is ignored: taken for last round's card. Remove it from the table"
          + (open ? ", or tap to add it to this hand" : "");
        ghost.title = why;
        ghost.setAttribute("aria-label", why);
        all.appendChild(ghost);
      });
      for (let i = seat.cards.length + ghosts.length; i < 5; i++) {
        const slot = el("button", "card slot" + (open ? "" : " idle"), "+");
        slot.type = "button";
        slot.dataset.seat = seat.name;
        slot.dataset.add = "1";
        slot.dataset.key = "slot:" + seat.name + ":" + i;
        slot.dataset.keyGroup = "seat:" + seat.name;
        // an empty place that cannot take a card now is no tab stop and no target
        slot.disabled = !open;
        slot.setAttribute("aria-label", "add a missing card to " + seatTitle(seat.name));
        all.appendChild(slot);
      }
      if (r) all.appendChild(el("span", "group-label", "NO BULL"));
      hand.appendChild(all);
    }
    return hand;
  }

  function seatNode(seat) {
    // A voided round has no winner and moves no money: no WIN/LOSE, no multiple, no PAY/COLLECT for
    // anyone to act on (should a payout line still arrive), and each dealt seat says so plainly.
    const voided = state.round.state === "void";
    const outcome = voided ? null : seat.outcome;
    const box = el("div", "seat" + (seat.name === "banker" ? " banker" : "") + (outcome ? " " + outcome : ""));
    box.dataset.seat = seat.name;
    const head = el("div", "seat-head");
    head.appendChild(el("span", "seat-name", seatTitle(seat.name)));
    if (seat.name !== "banker") {
      const betBtn = el("button", "bet-chip" + (seat.bet ? "" : " empty"));
      betBtn.type = "button";
      betBtn.dataset.betSeat = seat.name;
      betBtn.dataset.key = "bet:" + seat.name;
      betBtn.textContent = seat.bet ? betText(seat.bet) : "No bet";
      betBtn.disabled = !state.round.bets_open;
      // On a settled or voided round the chips are the next round's stakes (its own are in the
      // payout lines): entered now, before the sweep, they are there when the next deal begins.
      if (nextBets()) {
        betBtn.classList.add("next");
        betBtn.title = "Bet for round " + state.round.chips_for;
      }
      head.appendChild(betBtn);
    } else if (grab()) {
      // the settled round's own bid is in its payout lines ("×2 bid"); this one is the next round's
      const next = nextBets();
      const bidBtn = el("button", "bet-chip bid-chip" + (next ? " next" : ""),
        (next ? "Next bid ×" : "Bid ×") + state.round.banker_bid);
      if (next) bidBtn.title = "Bank bid for round " + state.round.chips_for;
      bidBtn.type = "button";
      bidBtn.dataset.bidChip = "1";
      bidBtn.dataset.key = "bid";
      bidBtn.disabled = !state.round.bets_open;
      head.appendChild(bidBtn);
    }
    if (seat.name === "banker" && covered()) {
      const stack = state.round.banker_stack;
      const next = nextBets();
      const stackBtn = el("button", "bet-chip stack-chip" + (stack ? "" : " empty") + (next ? " next" : ""),
        (stack ? (next ? "Next stack " : "Stack ") + money(stack) : (next ? "Next stack" : "Enter stack")));
      if (next) stackBtn.title = "Banker's stack for round " + state.round.chips_for;
      stackBtn.type = "button";
      stackBtn.dataset.stackChip = "1";
      stackBtn.dataset.key = "stack";
      stackBtn.disabled = !state.round.bets_open;
      head.appendChild(stackBtn);
    }
    box.appendChild(head);
    box.appendChild(handNode(seat));
    const verdict = el("div", "verdict");
    verdict.appendChild(el("span", "category", seat.result ? seat.result.label : handCount(seat.cards.length)));
    if (outcome) verdict.appendChild(el("span", "outcome " + outcome, outcome.toUpperCase()));
    // What the stake is multiplied by, as the money line below is computed: an equal bet won with
    // Niu Niu pays once, so the hand's own x3 (a double bet's) beside WIN would mislead.
    if (!voided && seat.line && seat.line.multiplier > 1) {
      const times = el("span", "mult", "×" + seat.line.multiplier);
      times.title = "the stake × " + seat.line.multiplier;
      verdict.appendChild(times);
    }
    box.appendChild(verdict);
    const held = new Set(seat.cards.map((c) => c.code));
    const ignored = seat.result ? [] : staleCards(seat.name).filter((code) => !held.has(code));
    if (ignored.length) {
      box.appendChild(el("p", "stale-note", ignored.map(cardText).join(" ") + " ignored as last round's"
        + (ignored.length > 1 ? " cards" : " card") + ": remove " + (ignored.length > 1 ? "them" : "it") + " or add "
        + (ignored.length > 1 ? "them" : "it")));
    }
    const line = seat.line;
    if (seat.correction && !voided) {
      // Where a player banks, the banker's side of a correction's difference is that player's
      // to pay (or be paid): the same box as a seat's, so the pair reads at a glance.
      box.appendChild(correctionNode(seat.correction, seat.name));
    } else if (voided && seat.name !== "banker" && (line || seat.cards.length)) {
      const m = el("div", "money void");
      m.appendChild(el("span", "amount", "VOID · no money moves"));
      box.appendChild(m);
    } else if (line && line.correction && seat.line_final) {
      box.appendChild(correctionNode(line.correction, seat.name));
    } else if (line) {
      const m = el("div", "money " + line.action + (seat.line_final ? " final" : " preview"));
      const word = line.action === "pay" ? "PAY " : line.action === "collect" ? "COLLECT " : "PUSH ";
      // A win whose whole payout the commission took (a one-unit stake, rounding up) moves no
      // money either, but it is a WIN: "PUSH" beside it would read as a tie.
      m.appendChild(el("span", "amount", line.action === "none"
        ? (line.outcome === "win" ? "WIN · commission takes the whole win" : "PUSH · no money moves")
        : line.action === "unpaid" ? "NOTHING TO PAY" : word + money(line.amount)));
      if (line.banker_bid) m.appendChild(el("small", "factors", "×" + line.banker_bid + " bid · ×" + line.bet_multiple + " multiple"));
      // The banker's stack ran out: the dealer pays what it covered, and the player sees what is
      // missing, on the commission's line (a seventh seat's payout must still fit a 720-line panel).
      const fee = Number(line.commission) > 0;
      const small = line.short
        ? el("small", "short", "short " + grouped(line.short) + " of " + grouped(line.owed)
          + (fee ? " · comm. " + grouped(line.commission) : ""))
        : el("small", "commission", (fee ? "commission " + grouped(line.commission) + " (win " + grouped(line.gross) + ")"
          : "no commission"));
      if (!seat.line_final) small.textContent += " · to settle";
      m.appendChild(small);
      box.appendChild(m);
    }
    return box;
  }

  // Corrected after it was paid: the chips already moved at Settle, so what the dealer does now is
  // what the round still owes the seat (or the banker), never the recomputed line (that would pay twice).
  function correctionNode(c, name) {
    const m = el("div", "money " + c.action + " final corrected");
    // "· correction" in its own words, which a short screen sets smaller than the amount (fitSeats)
    const amount = el("span", "amount", c.action === "none" ? "NO CHANGE"
      : (c.action === "pay" ? "PAY " : "COLLECT ") + money(c.amount));
    amount.appendChild(el("span", "note", " · correction"));
    m.appendChild(amount);
    // until the chips have moved (or a supervisor waived it) the round's books and the table differ
    const done = adjustState(state.round.adjustment, name);
    m.appendChild(el("small", "paid", "paid " + lineText(c.paid_outcome, c.paid_net) + " · now " + lineText(c.outcome, c.net)
      + (done ? " · " + done : "")));
    if (done === "outstanding") m.classList.add("outstanding");
    return m;
  }

  function drawTable() {
    const seats = state.seats;
    const banker = $("banker");
    banker.replaceChildren(seatNode(seats.find((s) => s.name === "banker")));
    const others = $("seats");
    others.replaceChildren(...seats.filter((s) => s.name !== "banker").map(seatNode));
    others.dataset.count = String(seats.length - 1);
  }

  function drawSide() {
    const r = state.round;
    // a new round's column starts at its top, the figures first, whatever the last one was scrolled to
    if (r.no !== shownRound) { toTop(); shownRound = r.no; }
    $("round-no").textContent = r.no || "–";
    const badge = $("round-state");
    badge.textContent = r.state.toUpperCase();
    badge.className = "state-badge " + r.state;
    const totals = $("totals");
    totals.replaceChildren();
    totals.classList.toggle("void", r.state === "void");
    if (r.state === "void") {
      // Never "If settled now" after a void: that preview is what no one may pay or collect.
      totals.appendChild(el("div", "t-title", "Round " + r.no + " voided"));
      totals.appendChild(el("div", "t-line void", "No money moves"));
      totals.appendChild(el("div", "t-line small", "Pay nothing, collect nothing. " + nextBetsWords(r) + "."));
    } else if (state.totals) {
      const t = state.totals;
      totals.appendChild(el("div", "t-title", t.final ? "Round " + r.no + " settled" + (t.corrected ? " (corrected)" : "") : "If settled now"));
      // The house keeps the commission; where it banks, the banker's side is its own too.
      // A player-banker's result is that player's, not the house's.
      const houseBanks = state.table.banking === "house";
      const shown = houseBanks ? t.house_net : t.banker_net;
      const up = Number(shown) >= 0;   // the sign only: amounts are the server's text
      totals.appendChild(el("div", "t-line " + (up ? "collect" : "pay"), (houseBanks ? "House " : "Banker ") + (up ? "+" : "") + money(shown)));
      totals.appendChild(el("div", "t-line small", (houseBanks ? "incl. commission " : "house commission ") + money(t.commission)));
    } else {
      totals.appendChild(el("div", "t-title", r.bets_open ? "Bets open for round " + (r.no + 1) : "Round " + r.no));
    }
    drawActions();
    $("settle-blocker").textContent = r.settle_blocker || (r.state === "settled"
      ? (r.bets_open ? "Settled. Bets are open for round " + (r.no + 1) + ": enter them as the cards are cleared."
        : "Settled. " + nextBetsWords(r) + ".")
      : r.state === "void" ? "Voided. Clear the cards for the next round." : "");
    const alerts = $("alerts");
    alerts.replaceChildren(...r.alerts.map((a) => el("p", "alert", "⚠ " + a.message)));
    drawOwed();
  }

  // Every round of the table whose correction is still to be paid, collected or waived, however
  // long ago it was dealt: the chips must follow the books, and someone has to say they did.  One
  // button under Next round and Void, where nothing scrolls it away (QA49 supervisor M1: a line
  // in the column of totals was cut off once a round was settled, and on a 600-line panel hidden).
  function drawOwed() {
    const owed = state.adjustments || [];
    const button = $("owed-btn");
    button.hidden = !owed.length;
    if (!owed.length) {
      if ($("owed-dialog").open) $("owed-dialog").close();
      return;
    }
    $("owed-title").textContent = owed.length === 1 ? "⚖ Round " + owed[0].round + " owes" : "⚖ " + owed.length + " rounds owe";
    $("owed-what").textContent = owed.length === 1 ? owed[0].text
      : owed.map((a) => "#" + a.round + " " + a.text).join(" · ");
    const words = owed.map((a) => "Round " + a.round + ": " + a.text);
    button.title = words.join("\n") + "\nTap once it is paid or collected, or to have it waived";
    button.setAttribute("aria-label", "Adjustments owed, tap to record: " + words.join("; "));
    if ($("owed-dialog").open) drawOwedList();
  }

  function drawOwedList() {
    $("owed-list").replaceChildren(...(state.adjustments || []).map((a) => {
      const b = el("button", "btn owed-round");
      b.type = "button";
      b.dataset.adjustRound = String(a.round);
      b.dataset.key = "adjust:" + a.round;
      b.append(el("b", null, "Round " + a.round), el("span", null, a.text));
      return b;
    }));
  }

  // The action buttons, from the state and from what is still being sent.
  function drawActions() {
    const r = state.round;
    $("settle-btn").disabled = !r.can_settle;
    $("void-btn").disabled = !r.can_void;
    $("clear-btn").disabled = !r.can_clear;
    // Same bets is offered only while bets are open, when nothing can be settled: it takes the
    // settle button's place, so the column above the seats is as tall as ever and a short screen
    // (1280x720) still shows both rows of seats without scrolling.
    $("repeat-btn").hidden = !r.repeat_from;
    $("repeat-btn").textContent = "Same bets as #" + r.repeat_from;
    $("settle-btn").hidden = Boolean(r.repeat_from) && !r.can_settle;
  }

  function drawHistory() {
    const strip = $("history");
    const tiles = state.history.map((h) => {
      const tile = el("button", "tile " + h.status + (h.corrected ? " corrected" : "") + (h.alerts.length ? " alerted" : ""));
      tile.type = "button";
      tile.dataset.round = h.round;
      tile.dataset.key = "tile:" + h.round;
      tile.appendChild(el("b", null, "#" + h.round));
      const what = h.status === "void" ? "VOID" : h.status === "interrupted" ? "INTERRUPTED"
        : h.status === "settled" ? "players " + (Number(h.players_net) > 0 ? "+" : "") + grouped(h.players_net) : h.status;
      tile.appendChild(el("span", null, what));
      // Both marks in one box, laid out (and sized) with the tile's text: kiosk.css keeps a tile
      // from being squeezed narrower than that text, marks included.
      const owing = Boolean(h.adjustment && h.adjustment.status === "outstanding");
      // each mark says in words what it means, the tile all of them (QA53 L5)
      const alerts = h.alerts.length ? h.alerts.length + (h.alerts.length > 1 ? " alerts" : " alert") : "";
      const meant = [[h.corrected, "✎", "", "corrected"], [owing, "⚖", " owing", "adjustment outstanding"],
        [alerts, "⚠", "", alerts]].filter(([shown]) => shown);
      if (meant.length) {
        tile.title = meant.map(([, , , words]) => words).join(", ");
        const marks = el("span", "marks");
        meant.forEach(([, sign, kind, words]) => {
          const mark = el("i", "mark" + kind, sign);
          mark.title = words;
          marks.appendChild(mark);
        });
        tile.appendChild(marks);
      }
      return tile;
    });
    strip.replaceChildren(el("span", "strip-title", "Last rounds"), ...tiles);
  }

  function apply(next) {
    if (!next) return;
    const run = next.run || null;
    if (run && retiredRuns.has(run)) return;   // a late answer from a kiosk process since restarted
    if (state && run !== (state.run || null)) {
      // The kiosk restarted: its versions start again from 1, so they are not compared with the
      // last run's; this state is the table now.
      if (state.run) retiredRuns.add(state.run);
      version = 0;
    } else if (next.version && state && next.version <= version) {
      // The same version arrives twice (the action's answer and the event stream): draw it once.
      return;
    }
    version = next.version || version;
    state = next;
    if (drawPending) return;
    // A card landing makes several states in a burst; draw once per display frame.
    drawPending = true;
    window.requestAnimationFrame(redraw);
  }

  // Every seat's box, PAY/COLLECT line and all, in view with no scrolling (QA53: with two alarms,
  // a grab table's bid line or a correction's words, the second row of seats scrolled out of sight at
  // 1280x720).  Where the seats' place is too short for them, their secondary words are set smaller
  // first ("tight", kiosk.css), then their cards narrower, never under a finger's 44 px; on a screen
  // that has room, or once the alarms go, they are drawn as before.  Only the seats change: the place
  // they are given does not, so the ResizeObserver below is not set off by what this does.
  //
  // A screen 800 lines or taller first tries the PAY/COLLECT amounts larger ("large", kiosk.css), each
  // on one line, a long one ("COLLECT 12,345.00 USD") set smaller to stay on it: read at arm's length
  // they were at half the size a glance needs (QA53 H1).  Where the seats would not fit so, with
  // cards of 44 px, the amounts go back to their size.
  const MIN_CARD_PX = 44;
  const ROOM_FOR_LARGE = window.matchMedia("(min-height: 761px)");

  function fitSeats() {
    const seats = $("seats");
    const amounts = [...seats.querySelectorAll(".money .amount")];
    asStyled(seats, amounts);
    if (ROOM_FOR_LARGE.matches && amounts.length) {
      seats.classList.add("large");
      oneLine(amounts);
      if (fitCards(seats)) return;
      asStyled(seats, amounts);
    }
    fitCards(seats);
  }

  // the seats and their amounts as kiosk.css draws them, before any fitting
  function asStyled(seats, amounts) {
    seats.classList.remove("tight", "fit", "large");
    seats.style.removeProperty("--fit-w");
    amounts.forEach((amount) => {
      amount.style.removeProperty("font-size");
      amount.style.removeProperty("white-space");
    });
  }

  // The amounts one size, the largest at which the longest stays on its line.  One that would need
  // less than the size a screen without "large" gives it ("WIN · commission takes the whole win") has
  // that size and wraps, as it did, and does not make the others smaller.
  function oneLine(amounts) {
    const style = getComputedStyle(amounts[0]);
    const size = parseFloat(style.fontSize);
    const floor = parseFloat(style.getPropertyValue("--amount-floor")) || 0;
    const fitted = amounts.map((a) => Math.floor(size * a.clientWidth / Math.max(a.scrollWidth, 1)));
    const common = Math.min(size, ...fitted.filter((px) => px >= floor));
    amounts.forEach((a, i) => {
      const px = fitted[i] >= floor ? common : floor;
      if (px < size) a.style.fontSize = px + "px";
      if (fitted[i] < floor) a.style.whiteSpace = "normal";
    });
  }

  // The secondary words smaller, then the cards narrower; false where even so the seats scroll.
  function fitCards(seats) {
    if (seats.scrollHeight <= seats.clientHeight) return true;
    seats.classList.add("tight");
    const excess = seats.scrollHeight - seats.clientHeight;
    const card = seats.querySelector(".hand .card");
    if (excess <= 0 || !card) return excess <= 0;
    const width = card.getBoundingClientRect().width;
    const rows = new Set([...seats.children].map((s) => s.offsetTop)).size;
    // a row is as tall as its tallest hand, 1.4 card widths and its labels
    const fit = Math.max(MIN_CARD_PX, Math.floor((width - (excess + 1) / rows / 1.4) * 2) / 2);
    if (fit < width) {
      seats.style.setProperty("--fit-w", fit + "px");
      seats.classList.add("fit");
    }
    return seats.scrollHeight <= seats.clientHeight;
  }

  // The round's figures, the settle blocker and the alerts scroll inside their column, which is never
  // taller than the top row (kiosk.css .info).  Where they are longer, a marker over its foot says what
  // is below ("▼ 3 alerts below", or "▼ more below" for the rest of the words), a tap on it or the
  // column bringing that to the top, and, at the end, "▲ back to the top".  The marker grows over a line
  // its top would cut through, so every line shown is whole (QA53 L7: with a long blocker, three alerts
  // were a thin orange edge at the foot, and nothing said there was more).
  let shownRound = null;

  function fitInfo() {
    const info = $("info"), more = $("info-more");
    more.style.removeProperty("--cover");
    // measured at the top only: taking the marker's room away from a scrolled column would scroll it
    if (info.scrollTop <= 0) {
      info.classList.remove("more");
      info.style.removeProperty("--room");
      if (info.scrollHeight <= info.clientHeight + 1) { more.hidden = true; return; }
    }
    info.classList.add("more");
    more.hidden = false;
    const box = info.getBoundingClientRect();
    const fold = box.bottom - info.clientTop - more.offsetHeight;
    // each line of words and each alert's first line: whole above the fold, or under the marker
    const pieces = [];
    const walker = document.createTreeWalker(info, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode());) {
      if (!node.data.trim() || !node.parentElement.offsetParent) continue;
      const words = document.createRange();
      words.selectNodeContents(node);
      for (const line of words.getClientRects()) pieces.push({ top: line.top, bottom: line.bottom });
    }
    info.querySelectorAll("#alerts .alert").forEach((a) => {
      const edge = a.getBoundingClientRect();
      const lines = pieces.filter((p) => !p.alert && p.top >= edge.top - 0.5);
      pieces.push({ top: edge.top, bottom: lines.length ? Math.min(...lines.map((p) => p.bottom)) : edge.bottom, alert: a });
    });
    const cut = pieces.filter((p) => p.top < fold - 0.5 && p.bottom > fold + 0.5 && p.top >= box.top - 0.5);
    const coverTop = Math.min(fold, ...cut.map((p) => p.top));
    more.style.setProperty("--cover", Math.max(0, fold - coverTop) + "px");
    const hidden = pieces.filter((p) => p.alert && p.bottom > coverTop + 0.5).length;
    const below = pieces.some((p) => p.bottom > coverTop + 0.5);
    more.dataset.scrollBy = below ? String(Math.max(1, coverTop - box.top - info.clientTop)) : "";
    $("info-more-words").textContent = !below ? "▲ back to the top"
      : hidden ? "▼ " + hidden + (hidden > 1 ? " alerts" : " alert") + " below" : "▼ more below";
  }

  function toTop() {
    $("info").style.removeProperty("--room");
    $("info").scrollTop = 0;
  }

  // the line the marker covered goes to the top; near the end, room is made below so that it can
  $("info-more").addEventListener("click", () => {
    const info = $("info"), by = Number($("info-more").dataset.scrollBy);
    if (!by) { toTop(); fitInfo(); return; }
    const short = info.scrollTop + by - (info.scrollHeight - info.clientHeight);
    if (short > 0) {
      const room = parseFloat(info.style.getPropertyValue("--room")) || 0;
      info.style.setProperty("--room", room + short + "px");
    }
    info.scrollTop += by;
    fitInfo();
  });
  // the whole column is the marker's target too: a finger's width and more
  $("info").addEventListener("click", () => { if (!$("info-more").hidden) $("info-more").click(); });
  let infoPending = false;
  $("info").addEventListener("scroll", () => {
    if (infoPending) return;
    infoPending = true;
    requestAnimationFrame(() => { infoPending = false; fitInfo(); });
  });

  function redraw() {
    drawPending = false;
    // The redraw replaces the seats' and the strip's nodes: the focused one is found again after.
    const active = document.activeElement;
    const key = active && active.dataset ? active.dataset.key : null;
    const group = active && active.dataset ? active.dataset.keyGroup : null;
    const action = active && active.closest ? active.closest(".actions") : null;
    drawTable();
    drawSide();
    drawHistory();
    if (!openDialogNode()) {
      const now = document.activeElement;
      if (lostFocus()) {
        if (key) focusKey(key, group);
        else if (action) focusNextAction();
      } else if (action && now === active && !usable(now)) {
        focusNextAction();      // Settle disabled once settled, Same bets hidden once placed
      }
    }
    fitSeats();
    fitInfo();
    document.body.dataset.version = String(version);
    document.body.dataset.run = state.run || "";
    placeCamera();
  }

  function applyStatus(s) {
    const pill = $("camera-pill");
    const camera = s.camera || "unknown";
    const offline = camera === "offline" || camera === "stopped";
    pill.textContent = camera === "unknown" ? "NO CAMERA" : camera === "finished" ? "RECORDING ENDED" : "CAMERA " + camera.toUpperCase();
    pill.className = "pill " + (camera === "online" ? "ok" : offline ? "bad" : "warn");
    // The alarm going away is not all: the dealer who stopped is told the cards are read again.
    if (!$("camera-alarm").hidden && camera === "online") toast("Camera back online: cards are read again", "ok");
    $("camera-alarm").hidden = !offline;
    const clock = s.clock || {};
    $("clock-pill").hidden = clock.synchronised !== false;
    $("clock-pill").title = clock.message || "";
    $("audit-alarm").hidden = !s.audit_error;
    // what to do first: on a short screen an alarm is one line, and the error's own words put
    // "stop the game" 250 characters in, past the "…" (review R1 M1)
    $("audit-alarm").textContent = s.audit_error ? "⚠ AUDIT LOG FAILURE — STOP THE GAME, call the supervisor: " + s.audit_error : "";
    $("disk-warning").hidden = !s.disk_warning;
    $("disk-warning").textContent = s.disk_warning ? "⚠ DATA DISK LOW — call the supervisor: " + s.disk_warning : "";
    // A round played with no recording is evidence lost (QA51 H4): said until a recording starts
    // again (recording_error), or until the next round (recording_warning: what this one dropped).
    const recording = s.recording_error ? "⚠ NOT RECORDING — call the supervisor: " + s.recording_error
      : s.recording_warning ? "⚠ RECORDING INCOMPLETE — call the supervisor: " + s.recording_warning : "";
    $("recording-warning").hidden = !recording;
    $("recording-warning").textContent = recording;
    // a past round missing from the history strip is said here, not only in the journal (QA51 review L1)
    $("history-warning").hidden = !s.history_warning;
    $("history-warning").textContent = s.history_warning ? "⚠ AUDIT RECORD DAMAGED — " + s.history_warning : "";
    $("camera-warning").hidden = !s.camera_warning;
    $("camera-warning").textContent = s.camera_warning ? "⚠ CHECK THE CAMERA — " + s.camera_warning : "";
    $("camera-reason").textContent = s.camera_reason || s.last_error || "";
    document.body.classList.toggle("camera-down", offline);
    // A reader without its orientation model misreads more (QA52): said in words across the screen
    // like the other warnings, as the MODEL pill's ellipsis cut them off (QA52 review M1); the pill
    // turns amber, and both name the missing file in their tooltip, for the technician.
    const orientation = s.orientation_missing
      ? s.orientation_missing + " is missing: the cards are read without being turned upright, and are misread more" : "";
    $("model-warning").hidden = !orientation;
    $("model-warning").textContent = orientation ? "⚠ NO ORIENTATION MODEL — call the technician: cards are misread more" : "";
    $("model-warning").title = orientation;
    // a short screen shows each alarm on one line (kiosk.css): a mouse finds its words whole here, and
    // one opened whole by a tap (below) is back on its line when it comes again
    document.querySelectorAll("#alarms .alarm").forEach((a) => {
      if (!a.classList.contains("standing")) a.title = a.textContent.trim();
      if (a.hidden) a.classList.remove("whole");
    });
    const modelPill = $("model-pill");
    modelPill.textContent = "MODEL " + (s.model || "none");
    modelPill.className = "pill " + (orientation ? "warn" : "neutral");
    modelPill.title = orientation || "card model";
    const fps = s.fps === null || s.fps === undefined ? "–" : s.fps;
    const fpsPill = $("fps-pill");
    // too slow is said in words, not by the amber alone (QA53 L3)
    const slow = camera === "online" && Number(fps) < 2;
    fpsPill.textContent = fps + " FPS" + (slow ? " · SLOW" : "");
    fpsPill.className = "pill " + (slow ? "warn" : "neutral");
    // What the supervisor asks when the frame rate drops: is the model slow, or is every
    // seat zone being read because the motion gate sees movement everywhere?
    const zones = s.regions_read === undefined ? null : s.regions_read + (s.regions_reused || 0);
    fpsPill.title = [
      s.detect_ms === undefined ? "" : "card model " + s.detect_ms + " ms a frame",
      zones === null ? "" : s.regions_read + " of " + Math.round(zones) + " seat zones read a frame" +
        (s.motion_gate ? " (the others unchanged)" : ""),
    ].filter(Boolean).join("; ");
  }

  // ------------------------------------------------------------------ the live feed

  function connect() {
    if (source) source.close();
    // since and run: a kiosk that restarted (another run) sends its newest state at once,
    // whatever the version this page had reached.
    const query = new URLSearchParams();
    if (version) query.set("since", String(version));
    if (state && state.run) query.set("run", state.run);
    const text = query.toString();
    source = new EventSource(urls.events + (text ? "?" + text : ""));
    source.addEventListener("state", (e) => { lastMessage = Date.now(); apply(JSON.parse(e.data)); });
    source.addEventListener("status", (e) => { lastMessage = Date.now(); applyStatus(JSON.parse(e.data)); });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        fetch(urls.whoami, { credentials: "same-origin" }).then((r) => {
          if (r.status === 401) window.location = urls.login;
          else setTimeout(connect, 1000);
        }).catch(() => setTimeout(connect, 2000));
      }
    };
  }

  setInterval(() => {
    const stale = Date.now() - lastMessage > STALE_MS;
    $("conn-lost").hidden = !stale;
    const link = $("link-pill");
    link.textContent = stale ? "NO LINK" : "LIVE";
    link.className = "pill " + (stale ? "bad" : "ok");
  }, 1000);

  // ------------------------------------------------------------------ dialogs

  document.querySelectorAll("dialog [data-close]").forEach((b) => b.addEventListener("click", () => b.closest("dialog").close()));

  // A dialog remembers what opened it: closed, the focus goes back there, to the same seat's chip
  // or card even where a state pushed meanwhile has redrawn it.
  function openDialog(dialog) {
    const opener = document.activeElement;
    dialog._opener = opener && opener !== document.body ? opener : null;
    dialog._openerKey = opener && opener.dataset ? opener.dataset.key : null;
    dialog._openerGroup = opener && opener.dataset ? opener.dataset.keyGroup : null;
    dialog.showModal();
  }

  function focusables(root) {
    return [...root.querySelectorAll("button, input, select, textarea, a[href], [tabindex]")]
      .filter((n) => !n.disabled && n.tabIndex >= 0 && n.getClientRects().length > 0);
  }

  let dialogClosedAt = 0;
  let dialogTap = null;   // where the last tap in a dialog landed
  document.addEventListener("click", (e) => {
    if (e.target.closest && e.target.closest("dialog")) dialogTap = { x: e.clientX, y: e.clientY };
  }, true);
  // The second tap of a double tap on a dialog's button lands on the table once the dialog has
  // closed: a tap there, that soon and on the same spot, is not the dealer's.
  function justClosed(e) {
    return Date.now() - dialogClosedAt < 500 && dialogTap !== null
      && Math.abs(e.clientX - dialogTap.x) < 30 && Math.abs(e.clientY - dialogTap.y) < 30;
  }

  document.querySelectorAll("dialog").forEach((dialog) => {
    dialog.addEventListener("close", () => {
      dialogClosedAt = Date.now();
      if (!lostFocus()) return;
      if (usable(dialog._opener)) dialog._opener.focus({ preventScroll: true });
      else if (dialog._openerKey) focusKey(dialog._openerKey, dialog._openerGroup);
    });
    // Tab goes round the dialog's own controls, never out of the page to the browser.
    dialog.addEventListener("keydown", (e) => {
      if (e.key !== "Tab" || e.altKey || e.ctrlKey || e.metaKey) return;
      const list = focusables(dialog);
      if (!list.length) return;
      const first = list[0], last = list[list.length - 1];
      const at = document.activeElement;
      if (e.shiftKey && (at === first || !dialog.contains(at))) { e.preventDefault(); last.focus(); }
      else if (!e.shiftKey && (at === last || !dialog.contains(at))) { e.preventDefault(); first.focus(); }
    });
  });

  // Enter in a dialog's field does what its main button (data-default) does.  Left to the browser,
  // Enter submits the form, and a method="dialog" form only closes: a bet typed and Entered was
  // dropped without a word.  Where another field is still empty (the PIN after the reason), Enter
  // moves there rather than send half a form; where there is nothing to press yet (no card picked),
  // the dialog stays open and says what is missing.
  function enterPressed(form, field) {
    const shown = (node) => node.getClientRects().length > 0;
    const empty = [...form.querySelectorAll("input")].find((i) => i !== field && i.type !== "hidden"
      && !i.disabled && shown(i) && !i.value);
    if (empty) { empty.focus(); return; }
    const main = form.querySelector("[data-default]");
    if (main && !main.disabled && shown(main)) { main.click(); return; }
    const error = form.querySelector(".error-text");
    if (error && form.dataset.enterHint) error.textContent = form.dataset.enterHint;
  }
  document.querySelectorAll("dialog form").forEach((form) => {
    form.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || e.isComposing || e.target.tagName !== "INPUT") return;
      e.preventDefault();   // no implicit submission: it would close the dialog
      enterPressed(form, e.target);
    });
    // An on-screen keyboard's Go can submit without a keydown Enter: that must not close it either.
    form.addEventListener("submit", (e) => { e.preventDefault(); enterPressed(form, document.activeElement); });
  });

  // The cards on the table now, as {seat: [codes]} (the shape of a history round's hands).
  function tableHands() {
    const hands = {};
    state.seats.forEach((s) => { hands[s.name] = s.cards.map((c) => c.code); });
    return hands;
  }

  function usedCodes(hands, exceptSeat, exceptCode) {
    const used = new Set();
    // A shoe of several decks holds each card more than once: nothing is greyed out there.
    if (state.table.decks > 1) return used;
    Object.keys(hands).forEach((seat) => hands[seat].forEach((code) => {
      if (!(seat === exceptSeat && code === exceptCode)) used.add(code);
    }));
    return used;
  }

  // hands: that round's cards, the table's or a history round's.  A card already in one of them is
  // greyed out for a settled round too: the kiosk refuses a card dealt twice, but only after the
  // reason and the supervisor's PIN have been typed.
  function openCorrection(seat, code, round, settled, hands) {
    correcting = { seat: seat, code: code, round: round, settled: settled };
    chosen = null;
    $("correct-title").textContent = "Correct " + code + " · " + seatTitle(seat) + " · round " + round;
    // After Settle a card the camera has since read as another (flagged "?") is confirmed by the
    // dealer who looked, with no PIN: nothing changes.  Only a change needs the supervisor.
    const flagged = settled && round === state.round.no && state.round.state === "settled"
      && state.seats.some((s) => s.name === seat && s.cards.some((c) => c.code === code && c.confirm));
    $("correct-note").textContent = flagged
      ? "The camera has read this card as another since Settle. If " + code + " is on the table, tap Card is "
        + "right (no PIN). If another card is, pick it: a supervisor's PIN and a reason, and the settlement is recomputed."
      : settled
      ? "This round is settled: a supervisor's PIN and a reason are required, and the settlement is recomputed."
      : "Pick the card that is really on the table.";
    $("correct-pin-label").hidden = !settled;
    $("correct-pin").value = "";
    $("correct-reason").value = "";
    showError($("correct-error"), "");
    $("correct-new").textContent = "…";
    $("correct-submit").disabled = true;
    $("correct-confirm").hidden = settled && !flagged;
    $("correct-remove").hidden = settled;
    const used = usedCodes(hands, seat, code);
    $("grid52").querySelectorAll(".gcard").forEach((g) => {
      g.disabled = used.has(g.dataset.code) || g.dataset.code === code;
      g.classList.toggle("current", g.dataset.code === code);
      g.classList.remove("chosen");
    });
    oneTabStop($("grid52"));
    openDialog($("correct-dialog"));
  }

  // A card grid is one Tab stop, its cards reached by the arrow keys: the Reason and the Supervisor PIN
  // after it are two Tabs away, not 33 (QA53 L1).  The stop is the chosen card, or the first one enabled.
  function oneTabStop(grid) {
    const cards = [...grid.querySelectorAll(".gcard")];
    const stop = cards.find((g) => g.classList.contains("chosen")) || cards.find((g) => !g.disabled);
    cards.forEach((g) => { g.tabIndex = g === stop ? 0 : -1; });
  }

  const ARROWS = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
  function arrowKeys(grid) {
    grid.addEventListener("keydown", (e) => {
      const step = ARROWS[e.key];
      const from = e.target.closest(".gcard");
      if (!step || !from) return;
      e.preventDefault();
      const rows = [...grid.querySelectorAll(".grid-row")].map((r) => [...r.querySelectorAll(".gcard")]);
      let row = rows.findIndex((r) => r.includes(from)), col = rows[row].indexOf(from);
      // the next enabled card that way, past the greyed-out ones; none: focus stays
      for (;;) {
        row += step[0]; col += step[1];
        if (col < 0 && step[1]) { row -= 1; col = rows[0].length - 1; }
        if (col >= rows[0].length && step[1]) { row += 1; col = 0; }
        if (row < 0 || row >= rows.length || !rows[row][col]) return;
        if (!rows[row][col].disabled) break;
      }
      from.tabIndex = -1;
      rows[row][col].tabIndex = 0;
      rows[row][col].focus();
    });
  }
  arrowKeys($("grid52"));
  arrowKeys($("grid52-add"));

  $("grid52").addEventListener("click", (e) => {
    const g = e.target.closest(".gcard");
    if (!g || g.disabled) return;
    $("grid52").querySelectorAll(".gcard.chosen").forEach((x) => x.classList.remove("chosen"));
    g.classList.add("chosen");
    oneTabStop($("grid52"));
    chosen = g.dataset.code;
    $("correct-new").textContent = chosen;
    $("correct-submit").disabled = false;
  });

  function sendCorrection(button, newCode, oldCode) {
    const body = { seat: correcting.seat, old: oldCode === undefined ? correcting.code : oldCode, new: newCode,
      reason: $("correct-reason").value, pin: $("correct-pin").value, round: correcting.round };
    return once($("correct-dialog"), button, async () => {
      try {
        const answer = await post(urls.correct, body);
        $("correct-dialog").close();
        if ($("history-dialog").open) $("history-dialog").close();
        const said = "Correction recorded: " + seatTitle(body.seat) + " " + (body.old || "") + " → " + (newCode || "removed");
        const result = (answer && answer.result) || {};
        if (result.action === "confirmed") {
          toast(seatTitle(body.seat) + ": " + body.old + " confirmed", "ok");
        } else if (result.settled) {
          // A settled round's correction moves money the table already paid: say what to pay or collect.
          // what the round now owes, whoever pays whom (a player-banker included)
          toast(said + " · " + (result.adjust_text || "no money to pay or collect"), "ok", 15000);
        } else {
          toast(said, "ok");
        }
      } catch (err) {
        showError($("correct-error"), failure(err, "Nothing was corrected", button.textContent.trim()));
        pinRefused(err, $("correct-pin"));
      }
    });
  }

  $("correct-submit").addEventListener("click", (e) => { if (chosen) sendCorrection(e.currentTarget, chosen); });
  $("correct-confirm").addEventListener("click", (e) => sendCorrection(e.currentTarget, correcting.code));
  $("correct-remove").addEventListener("click", (e) => sendCorrection(e.currentTarget, null));

  function openAdd(seat) {
    addingSeat = seat;
    addingRound = state.round.no;     // the card is for this round, not one dealt while the dialog is open
    $("add-title").textContent = "Add a missing card · " + seatTitle(seat);
    showError($("add-error"), "");
    const used = usedCodes(tableHands(), null, null);
    $("grid52-add").querySelectorAll(".gcard").forEach((g) => { g.disabled = used.has(g.dataset.code); });
    oneTabStop($("grid52-add"));
    openDialog($("add-dialog"));
  }

  $("grid52-add").addEventListener("click", (e) => {
    const g = e.target.closest(".gcard");
    if (!g || g.disabled) return;
    once($("add-dialog"), g, async () => {
      try {
        await post(urls.correct, { seat: addingSeat, old: null, new: g.dataset.code, round: addingRound,
          reason: $("add-reason").value || "card added by dealer" });
        $("add-dialog").close();
      } catch (err) { showError($("add-error"), failure(err, "No card was added", "the card")); }
    });
  });

  function openBet(seat) {
    const current = state.seats.find((s) => s.name === seat).bet;
    betSeat = seat;
    betKind = current ? current.kind : state.table.bet_kinds[0];
    $("bet-seat").textContent = seat;
    $("bet-amount").value = current ? current.amount : "";
    showError($("bet-error"), "");
    if (grab()) {
      const allowed = state.table.bet_multiples;
      betMultiple = current && current.multiple ? current.multiple : (allowed.includes(1) ? 1 : allowed[0]);
    }
    markKind();
    openDialog($("bet-dialog"));
  }

  // The chosen one of a row of toggles: gold and a ✓ (kiosk.css), and aria-pressed for a screen reader (QA53 L2).
  function pressOne(row, isChosen) {
    row.querySelectorAll(".kind").forEach((k) => {
      const on = isChosen(k);
      k.classList.toggle("on", on);
      k.setAttribute("aria-pressed", String(on));
    });
  }

  function markKind() {
    pressOne($("bet-kinds"), (k) => k.dataset.kind === betKind);
    if ($("bet-multiples")) pressOne($("bet-multiples"), (k) => Number(k.dataset.multiple) === betMultiple);
  }

  $("bet-kinds").addEventListener("click", (e) => {
    const k = e.target.closest(".kind");
    if (k) { betKind = k.dataset.kind; markKind(); }
  });
  if ($("bet-multiples")) {
    $("bet-multiples").addEventListener("click", (e) => {
      const k = e.target.closest(".kind");
      if (k) { betMultiple = Number(k.dataset.multiple); markKind(); }
    });
  }
  // A chip adds in whole cents: 0.56 + 5 in binary floating point is 5.5600000000000005,
  // which the kiosk (rightly) refuses as more than 2 decimals.
  function plusChip(typed, add) {
    const cents = Math.round((Number(typed) || 0) * 100) + add * 100;
    const whole = Math.trunc(cents / 100), part = Math.abs(cents % 100);
    return part ? whole + "." + String(part).padStart(2, "0") : String(whole);
  }
  document.querySelectorAll("#bet-dialog .chip").forEach((chip) => chip.addEventListener("click", () => {
    const add = Number(chip.dataset.add);
    const input = $("bet-amount");
    input.value = add === 0 ? "" : plusChip(input.value, add);
  }));

  function sendBet(button, amount) {
    const body = { seat: betSeat, amount: amount, kind: betKind };
    if (grab()) body.multiple = betMultiple;
    return once($("bet-dialog"), button, async () => {
      try {
        await post(urls.bet, body);
        $("bet-dialog").close();
      } catch (err) { showError($("bet-error"), failure(err, "The bet was not changed", button.textContent.trim())); }
    });
  }
  $("bet-submit").addEventListener("click", (e) => sendBet(e.currentTarget, $("bet-amount").value));
  $("bet-remove").addEventListener("click", (e) => sendBet(e.currentTarget, ""));

  function openBid() {
    $("bid-round").textContent = state.round.no + 1;
    showError($("bid-error"), "");
    pressOne($("bid-values"), (k) => Number(k.dataset.bid) === state.round.banker_bid);
    openDialog($("bid-dialog"));
  }

  if ($("bid-values")) {
    $("bid-values").addEventListener("click", (e) => {
      const k = e.target.closest(".kind");
      if (!k) return;
      once($("bid-dialog"), k, async () => {
        try {
          await post(urls.bankBid, { bid: Number(k.dataset.bid) });
          $("bid-dialog").close();
        } catch (err) { showError($("bid-error"), failure(err, "The bid was not changed", "the bid")); }
      });
    });
  }

  function openStack() {
    $("stack-round").textContent = state.round.no + 1;
    showError($("stack-error"), "");
    $("stack-amount").value = state.round.banker_stack || "";
    openDialog($("stack-dialog"));
  }

  if ($("stack-submit")) {
    $("stack-submit").addEventListener("click", (e) => {
      const button = e.currentTarget;
      once($("stack-dialog"), button, async () => {
        try {
          await post(urls.bankStack, { amount: $("stack-amount").value });
          $("stack-dialog").close();
        } catch (err) { showError($("stack-error"), failure(err, "The stack was not changed", "Set stack")); }
      });
    });
  }

  let voidingRound = null;
  $("void-btn").addEventListener("click", () => {
    voidingRound = state.round.no;      // the void is for this round, whatever is dealt while the PIN is typed
    $("void-round").textContent = state.round.no;
    $("void-reason").value = "";
    $("void-pin").value = "";
    showError($("void-error"), "");
    openDialog($("void-dialog"));
  });
  $("void-submit").addEventListener("click", (e) => {
    const button = e.currentTarget;
    once($("void-dialog"), button, async () => {
      try {
        await post(urls.void, { reason: $("void-reason").value, pin: $("void-pin").value, round: voidingRound });
        $("void-dialog").close();
        toast("Round voided", "ok");
      } catch (err) {
        showError($("void-error"), failure(err, "Nothing was voided", "Void round"));
        pinRefused(err, $("void-pin"));
      }
    });
  });

  // Settle, Same bets and Next round: one request at a time from this side of the screen.  A
  // failed one leaves every button as the state says (Settle usable again) and says so.
  const actions = document.querySelector(".actions");
  $("settle-btn").addEventListener("click", (e) => {
    const button = e.currentTarget;
    if (button.disabled) return;
    once(actions, button, async () => {
      // the round and the cards and bets the dealer is looking at: settled only if they still stand
      const shown = { round: state.round.no, basis: state.round.basis };
      try { await post(urls.settle, shown); toast("Round " + shown.round + " settled", "ok"); }
      catch (err) { toast(failure(err, "Nothing was settled", "Confirm & settle"), "bad"); }
    });
  });
  $("repeat-btn").addEventListener("click", (e) => {
    once(actions, e.currentTarget, async () => {
      try { await post(urls.repeatBets); } catch (err) { toast(failure(err, "No bets were placed", "Same bets"), "bad"); }
    });
  });
  $("clear-btn").addEventListener("click", (e) => {
    once(actions, e.currentTarget, async () => {
      try { await post(urls.clear); } catch (err) { toast(failure(err, "The next round was not started", "Next round"), "bad"); }
    });
  });

  area.addEventListener("click", (e) => {
    if (justClosed(e)) return;
    const bet = e.target.closest("[data-bet-seat]");
    if (bet) { if (!bet.disabled) openBet(bet.dataset.betSeat); return; }
    const bid = e.target.closest("[data-bid-chip]");
    if (bid) { if (!bid.disabled) openBid(); return; }
    const stack = e.target.closest("[data-stack-chip]");
    if (stack) { if (!stack.disabled) openStack(); return; }
    const card = e.target.closest(".card");
    if (!card || !state) return;
    if (card.dataset.add) {
      if (state.round.can_correct && state.round.state !== "settled") openAdd(card.dataset.seat);
      return;
    }
    const settled = state.round.state === "settled";
    if (!state.round.can_correct) { toast("Cards can be corrected while a round is dealt or after it is settled", "bad"); return; }
    openCorrection(card.dataset.seat, card.dataset.code, state.round.no, settled, tableHands());
  });

  // ------------------------------------------------------------------ history

  function historyDetail(h) {
    const box = el("div");
    box.appendChild(el("h2", null, "Round " + h.round + " · " + h.status.toUpperCase() + (grab() && h.banker_bid ? " · bid ×" + h.banker_bid : "")));
    if (h.void) box.appendChild(el("p", "alert", "Voided by " + (h.void.approved_by || h.void.actor) + ": " + (h.void.reason || "")));
    if (h.interrupted) box.appendChild(el("p", "alert", h.interrupted.reason));
    h.alerts.forEach((a) => box.appendChild(el("p", "alert", "⚠ " + a)));
    const table = el("table", "detail");
    const head = el("tr");
    // Corrected after it was paid: the result and net are as corrected; where the chips stand is
    // the table below it.
    const paid = h.paid_lines;
    (paid ? ["Seat", "Cards", "Hand", "Bet", "Result", "Net as corrected"]
      : ["Seat", "Cards", "Hand", "Bet", "Result", "Net"]).forEach((t) => head.appendChild(el("th", null, t)));
    table.appendChild(head);
    Object.keys(h.hands).forEach((seat) => {
      const tr = el("tr");
      tr.appendChild(el("td", null, seatTitle(seat)));
      const cards = el("td", "mini-cards");
      h.hands[seat].forEach((code) => {
        const red = /[HD]$/.test(code);
        const b = el("button", "mini " + (red ? "red" : "black"), code.slice(0, -1) + { S: "♠", H: "♥", D: "♦", C: "♣" }[code.slice(-1)]);
        b.type = "button";
        b.dataset.seat = seat;
        b.dataset.code = code;
        b.disabled = h.status !== "settled";
        b.title = h.status === "settled" ? "Correct this card (supervisor PIN)" : "";
        cards.appendChild(b);
      });
      tr.appendChild(cards);
      const res = h.results[seat];
      tr.appendChild(el("td", null, res ? res.label : ""));
      const bet = h.bets[seat];
      tr.appendChild(el("td", null, bet ? grouped(bet.amount) + " " + bet.kind + (bet.multiple ? " ×" + bet.multiple : "") : ""));
      const line = h.lines[seat];
      tr.appendChild(el("td", line ? line.outcome : "", line ? line.outcome.toUpperCase() : ""));
      tr.appendChild(el("td", null, line ? grouped(line.net) + (Number(line.commission) > 0 ? " (comm. " + grouped(line.commission) + ")" : "")
        + (line.short ? " (short " + grouped(line.short) + " of " + grouped(line.owed) + ")" : "") : ""));
      table.appendChild(tr);
    });
    box.appendChild(table);
    const adj = h.adjustment;
    if (paid && adj && adj.standing.length) box.appendChild(standingTable(h));
    if (adj) {
      // what the correction's difference has become: owed still, paid, waived, or not known
      if (adj.outstanding.length) {
        const p = el("p", "alert adjustment", "⚖ Adjustment outstanding: " + adj.text + " ");
        const b = el("button", "btn small", "Paid or waived…");
        b.type = "button";
        b.addEventListener("click", () => openAdjustment(adj));
        p.appendChild(b);
        box.appendChild(p);
      }
      adj.records.forEach((r) => box.appendChild(el("p", "adjusted", "Adjustment " + r.action + " by "
        + (r.approved_by || r.by) + ": " + r.text + (r.reason ? " (" + r.reason + ")" : ""))));
      if (adj.not_recorded.length) {
        box.appendChild(el("p", "adjusted", "Corrected before adjustments were recorded: whether "
          + adj.not_recorded.map(adjustText).join(" · ") + " was done is not in the log"));
      }
    }
    table.addEventListener("click", (e) => {
      const b = e.target.closest(".mini");
      if (b && !b.disabled) openCorrection(b.dataset.seat, b.dataset.code, h.round, true, h.hands);
    });
    return box;
  }

  // Per party where its chips stand, as the round page's table and the seat box tell it (QA49
  // supervisor L4; the rows are kiosk.adjustment_words.standing's): Settle's line alone, with its
  // own "owes" worked out here, still said 97.50 was owed after the dealer had paid it.
  function standingTable(h) {
    const table = el("table", "detail standing");
    const head = el("tr");
    ["Seat", "Paid at Settle", "Paid, collected or waived since", "At the table now", "As corrected", "Still owed"]
      .forEach((t) => head.appendChild(el("th", null, t)));
    table.appendChild(head);
    h.adjustment.standing.forEach((row) => {
      const tr = el("tr");
      tr.dataset.party = row.party;
      const settled = h.paid_lines[row.party];
      const now = h.lines[row.party];
      tr.append(el("td", null, row.name),
        el("td", null, settled ? lineText(settled.outcome, settled.net) : lineText(null, row.settled)),
        el("td", null, row.since),
        el("td", null, row.held === null ? "not known: corrected before adjustments were recorded" : lineText(null, row.held)),
        el("td", null, now ? lineText(now.outcome, now.net) : lineText(null, row.now)),
        el("td", "owed" + (Number(row.owed) ? " outstanding" : ""), row.owes));
      table.appendChild(tr);
    });
    return table;
  }

  $("history").addEventListener("click", (e) => {
    const tile = e.target.closest(".tile");
    if (!tile || justClosed(e)) return;
    const h = state.history.find((x) => String(x.round) === tile.dataset.round);
    if (!h) return;
    $("history-detail").replaceChildren(historyDetail(h));
    openDialog($("history-dialog"));
  });

  // ------------------------------------------------------------------ adjustments

  let adjusting = null;   // {round, basis, banking, text, waive}: the correction the dialog showed

  function openAdjustment(a) {
    adjusting = { round: a.round };
    $("adjust-title").textContent = "Adjustment · round " + a.round;
    $("adjust-reason").value = "";
    $("adjust-pin").value = "";
    showError($("adjust-error"), "");
    drawAdjustment(a, null);
    waiveMode(false);
    openDialog($("adjust-dialog"));
  }

  // The ticks, one row per party, its box beside its words (QA49 supervisor L3: the box sat on
  // a line of its own).  ``ticked``: the parties ticked before a refusal redrew them (null: all).
  function drawAdjustment(a, ticked) {
    Object.assign(adjusting, { basis: a.basis, banking: a.banking, text: a.text, waive: a.waive_text });
    $("adjust-seats").replaceChildren(...a.outstanding.map((o) => {
      const label = el("label", "adjust-seat");
      const box = el("input");
      box.type = "checkbox";
      box.checked = ticked === null || ticked.has(o.seat);
      box.dataset.seat = o.seat;
      label.append(box, el("span", null, adjustText(o)));
      return label;
    }));
    $("adjust-paid").disabled = $("adjust-waive").disabled = $("adjust-to-waive").disabled = false;
  }

  // After a refusal the state the kiosk answered with is the table now: the dialog shows what the
  // round owes now (QA49 supervisor L1: it kept the old amounts and basis, and every press was
  // refused again), or that nothing is owed any more.
  function refreshAdjustment() {
    if (!adjusting || !$("adjust-dialog").open) return;
    const a = (state.adjustments || []).find((x) => x.round === adjusting.round);
    if (!a) {
      $("adjust-seats").replaceChildren(el("p", "adjust-none", "Round " + adjusting.round + " owes nothing now."));
      $("adjust-paid").disabled = $("adjust-waive").disabled = $("adjust-to-waive").disabled = true;
      return;
    }
    const ticked = new Set([...$("adjust-seats").querySelectorAll("input[data-seat]")].filter((b) => b.checked)
      .map((b) => b.dataset.seat));
    drawAdjustment(a, ticked);
    waiveMode(!$("adjust-waive").hidden, true);
  }

  // Paid needs nobody's PIN; a waiver shows the supervisor's fields, and Enter then waives.
  function waiveMode(on, keepFocus) {
    $("adjust-waive-fields").hidden = !on;
    $("adjust-paid").hidden = on;
    $("adjust-to-waive").hidden = on;
    $("adjust-waive").hidden = !on;
    $("adjust-paid").toggleAttribute("data-default", !on);
    $("adjust-waive").toggleAttribute("data-default", on);
    const player = adjusting.banking === "player";
    // where a player banks the house pays nothing: the words say who pays whom (QA49 supervisor M4)
    $("adjust-note").textContent = on
      ? (player ? "A waiver moves no chips: " + adjusting.waive + " (for the ticked sides)."
        : "The house does not pay or collect the ticked seats' difference.")
        + " A supervisor's PIN and a reason are required."
      : (player ? adjusting.text + ". Tick each side once its chips have moved."
        : "The settlement was corrected after it was paid. Tick each seat whose difference was paid or collected at the table.");
    if (on && !keepFocus) $("adjust-reason").focus();
  }

  function sendAdjustment(button, action) {
    const seats = [...$("adjust-seats").querySelectorAll("input[data-seat]")].filter((b) => b.checked)
      .map((b) => b.dataset.seat);
    if (!seats.length) { showError($("adjust-error"), "Tick who it was done for."); return; }
    const body = { round: adjusting.round, basis: adjusting.basis, action: action, seats: seats };
    if (action === "waived") { body.reason = $("adjust-reason").value; body.pin = $("adjust-pin").value; }
    once($("adjust-dialog"), button, async () => {
      try {
        await post(urls.adjustment, body);
        $("adjust-dialog").close();
        if ($("history-dialog").open) $("history-dialog").close();
        toast("Round " + body.round + ": adjustment recorded as " + action + " for " + seats.map(seatTitle).join(", "), "ok");
      } catch (err) {
        if (err.status === 409) refreshAdjustment();
        showError($("adjust-error"), failure(err, "Nothing was recorded", button.textContent.trim()));
        pinRefused(err, $("adjust-pin"));
      }
    });
  }

  $("adjust-paid").addEventListener("click", (e) => sendAdjustment(e.currentTarget, "paid"));
  $("adjust-to-waive").addEventListener("click", () => waiveMode(true));
  $("adjust-waive").addEventListener("click", (e) => sendAdjustment(e.currentTarget, "waived"));
  // One round owed: its dialog at once.  Several: the list, each round with its words, one tap each.
  $("owed-btn").addEventListener("click", () => {
    const owed = state.adjustments || [];
    if (owed.length === 1) { openAdjustment(owed[0]); return; }
    drawOwedList();
    openDialog($("owed-dialog"));
  });
  $("owed-list").addEventListener("click", (e) => {
    const b = e.target.closest("[data-adjust-round]");
    const a = b && (state.adjustments || []).find((x) => String(x.round) === b.dataset.adjustRound);
    if (!a) return;
    $("owed-dialog").close();
    openAdjustment(a);
  });

  // ------------------------------------------------------------------ camera view

  $("camera-toggle").addEventListener("click", () => {
    const box = $("camera-box");
    const img = $("camera-view");
    const on = box.hidden;
    box.hidden = !on;
    if (on) img.src = urls.camera + "?t=" + Date.now(); else img.removeAttribute("src");
    $("camera-toggle").textContent = on ? "Hide camera" : "Show camera";
    $("camera-toggle").setAttribute("aria-pressed", String(on));
    placeCamera();
  });

  // The camera view covers no seat where there is room: it takes the free place below the last
  // seat of the right-hand column (with seven seats, the eighth place in the grid).  Where the
  // seats leave none (a small panel) it keeps its corner above the round strip.
  function placeCamera() {
    const box = $("camera-box");
    if (box.hidden) return;
    const seats = $("seats");
    const area = seats.getBoundingClientRect();
    const strip = $("history").getBoundingClientRect();
    const gap = parseFloat(getComputedStyle(seats).columnGap) || 8;
    const column = (area.width - 3 * gap) / 4;
    const left = area.right - column;
    let top = area.top;
    seats.querySelectorAll(".seat").forEach((s) => {
      const r = s.getBoundingClientRect();
      if (r.right > left + 1) top = Math.max(top, r.bottom + gap);
    });
    const bottom = Math.min(area.bottom, strip.top) - 2;
    const height = Math.min(bottom - top, column * 0.8);
    if (height < 100) {
      box.classList.remove("placed");
      box.style.removeProperty("left"); box.style.removeProperty("top");
      box.style.removeProperty("width"); box.style.removeProperty("height");
      return;
    }
    box.classList.add("placed");
    box.style.left = left + "px";
    box.style.top = (bottom - height) + "px";
    box.style.width = column + "px";
    box.style.height = height + "px";
  }
  window.addEventListener("resize", placeCamera);
  // an alarm shown or gone, the window turned: the seats' place changed, so they are fitted to it again
  new ResizeObserver(() => { if (state) { fitSeats(); fitInfo(); placeCamera(); } }).observe($("seats"));

  // On a short screen an alarm is one line ending in "…" (kiosk.css): a tap shows all its words,
  // for whoever is called to mend it, another puts it back on its line.
  $("alarms").addEventListener("click", (e) => {
    const alarm = e.target.closest(".alarm");
    if (alarm) alarm.classList.toggle("whole");
  });

  // ------------------------------------------------------------------ start

  fetch(urls.state, { credentials: "same-origin", headers: { "Accept": "application/json" } })
    .then((r) => { if (r.status === 401) { window.location = urls.login; return null; } return r.json(); })
    .then((data) => { if (data && data.state) apply(data.state); })
    .finally(connect);
})();
