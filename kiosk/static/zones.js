// The seat-zone editor: each zone's corners are handles dragged over the camera's picture.
// Zones are kept as fractions of the picture (what the table file stores); the SVG works in
// the picture's pixels so handles stay round whatever its shape.
(function () {
  "use strict";
  const editor = document.getElementById("zone-editor");
  const layer = document.getElementById("zone-layer");
  const field = document.getElementById("zones-field");
  const preview = document.getElementById("zones-preview");
  const frame = document.getElementById("zone-frame");
  const SVG = "http://www.w3.org/2000/svg";
  const original = JSON.parse(editor.dataset.zones);
  let zones = JSON.parse(field.value);
  let width = Number(editor.dataset.width), height = Number(editor.dataset.height);
  let drag = null;

  function round4(v) { return Math.round(v * 10000) / 10000; }

  function save() {
    field.value = JSON.stringify(zones);
    preview.textContent = Object.entries(zones)
      .map(([seat, pts]) => `${seat}: ${pts.map(p => `(${p[0].toFixed(4)}, ${p[1].toFixed(4)})`).join(" ")}`)
      .join("\n");
  }

  function node(name, attrs) {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    return el;
  }

  function draw() {
    layer.setAttribute("viewBox", `0 0 ${width} ${height}`);
    layer.style.aspectRatio = `${width} / ${height}`;   // without a picture the layer keeps its shape
    layer.replaceChildren();
    const r = Math.max(width, height) / 110;
    for (const [seat, pts] of Object.entries(zones)) {
      const px = pts.map(p => [p[0] * width, p[1] * height]);
      layer.append(node("polygon", {class: "zone", points: px.map(p => p.join(",")).join(" ")}));
      const cx = px.reduce((s, p) => s + p[0], 0) / px.length, cy = px.reduce((s, p) => s + p[1], 0) / px.length;
      const label = node("text", {class: "zone-label", x: cx, y: cy, "font-size": r * 2.4});
      label.textContent = seat === "banker" ? "Banker" : "Seat " + seat;
      layer.append(label);
      px.forEach((p, i) => {
        const handle = node("circle", {class: "zone-corner", cx: p[0], cy: p[1], r: r,
                                       "data-seat": seat, "data-corner": i});
        handle.addEventListener("pointerdown", start);
        layer.append(handle);
      });
    }
  }

  function at(event) {
    const point = layer.createSVGPoint();
    point.x = event.clientX; point.y = event.clientY;
    const p = point.matrixTransform(layer.getScreenCTM().inverse());
    return [Math.min(1, Math.max(0, p.x / width)), Math.min(1, Math.max(0, p.y / height))];
  }

  function start(event) {
    event.preventDefault();
    drag = {seat: event.target.dataset.seat, corner: Number(event.target.dataset.corner)};
    layer.setPointerCapture(event.pointerId);
  }

  layer.addEventListener("pointermove", event => {
    if (!drag) return;
    const [x, y] = at(event);
    zones[drag.seat][drag.corner] = [round4(x), round4(y)];
    draw(); save();
  });
  for (const end of ["pointerup", "pointercancel"]) layer.addEventListener(end, () => { drag = null; });

  document.getElementById("zones-reset").addEventListener("click", () => {
    zones = JSON.parse(JSON.stringify(original)); draw(); save();
  });
  if (frame) {
    const missing = document.getElementById("zones-no-frame");
    const view = document.getElementById("zone-view");
    const shown = () => {   // the picture's own size decides the shape
      if (!frame.isConnected) { editor.prepend(frame); if (view) frame.after(view); }
      if (missing) missing.hidden = true;
      width = frame.naturalWidth; height = frame.naturalHeight; draw();
    };
    // No picture (the camera offline or not started): say so, and take the broken image out
    // (the zones then keep the table's shape) but keep it, so that New picture brings it back.
    const failed = () => {
      frame.remove(); if (view) view.remove();
      if (missing) missing.hidden = false;
    };
    frame.addEventListener("load", shown);
    frame.addEventListener("error", failed);
    if (frame.complete) { if (frame.naturalWidth) shown(); else failed(); }   // before this script ran
    const refresh = document.getElementById("zones-refresh");
    if (refresh) refresh.addEventListener("click", () => { frame.src = frame.src.split("?")[0] + "?t=" + Date.now(); });
  }
  const blend = document.getElementById("view-blend"), overlay = document.getElementById("zone-view");
  if (blend && overlay) {   // the calibration picture over the live one: which way the camera moved
    const show = () => { overlay.style.opacity = String(Number(blend.value) / 100); };
    blend.addEventListener("input", show); show();
  }
  // Leaving with zones moved and not downloaded (a reload, a link, closing the tab) asks
  // first: nothing is kept on the kiosk, so the corners would be lost.
  let downloaded = JSON.stringify(original);
  document.getElementById("zones-form").addEventListener("submit", () => { downloaded = field.value; });
  window.addEventListener("beforeunload", event => {
    if (JSON.stringify(zones) === downloaded) return;
    event.preventDefault(); event.returnValue = "";
  });
  draw(); save();
})();
