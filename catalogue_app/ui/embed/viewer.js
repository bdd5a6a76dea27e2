/*
 * A small map viewer for the embed pages, without any library.
 *
 * Each element with class "embed-map" names a WMS address (data-wms), a layer (data-layer),
 * the CRS to work in (data-crs: EPSG:3857 or EPSG:4326) and the box to start at, in longitude
 * and latitude (data-bbox: "west,south,east,north"). The viewer shows one WMS 1.1.1 GetMap image
 * of the visible area; dragging pans, the wheel, the buttons, double clicks and the keys
 * (arrows, +, -, 0) zoom and pan. While the view moves, the last image is moved and scaled with
 * it; a new image is asked for once the view rests.
 */
(function () {
  "use strict";

  var EARTH_RADIUS = 6378137;
  var MAX_LAT = 85.0511287798;
  var MAX_PIXELS = 4096;          // the widest image asked for
  var REST_MS = 200;              // how long the view must rest before a new image is asked for
  var WORLDS = {
    "EPSG:3857": [-20037508.342789244, -20037508.342789244, 20037508.342789244, 20037508.342789244],
    "EPSG:4326": [-180, -90, 180, 90]
  };

  function clamp(value, low, high) {
    return Math.min(high, Math.max(low, value));
  }

  /* A longitude/latitude box in the viewer's CRS. */
  function project(crs, box) {
    if (crs !== "EPSG:3857") {
      return box.slice();
    }
    function x(lon) { return EARTH_RADIUS * lon * Math.PI / 180; }
    function y(lat) {
      lat = clamp(lat, -MAX_LAT, MAX_LAT);
      return EARTH_RADIUS * Math.log(Math.tan(Math.PI / 4 + lat * Math.PI / 360));
    }
    return [x(box[0]), y(box[1]), x(box[2]), y(box[3])];
  }

  function button(parent, text, label, action) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.title = label;
    b.setAttribute("aria-label", label);
    b.addEventListener("click", function (event) {
      event.stopPropagation();
      action();
    });
    parent.appendChild(b);
    return b;
  }

  function Viewer(element) {
    this.element = element;
    this.wms = element.getAttribute("data-wms");
    this.layer = element.getAttribute("data-layer");
    this.crs = WORLDS[element.getAttribute("data-crs")] ? element.getAttribute("data-crs") : "EPSG:4326";
    this.world = WORLDS[this.crs];
    var box = element.getAttribute("data-bbox").split(",").map(Number);
    this.home = project(this.crs, [Math.min(box[0], box[2]), Math.min(box[1], box[3]),
                                   Math.max(box[0], box[2]), Math.max(box[1], box[3])]);
    this.maxRes = (this.world[2] - this.world[0]) / 256;
    this.minRes = this.maxRes / Math.pow(2, 24);
    this.front = null;       // the image shown: {img, x0, y1, res, width, height}
    this.asked = 0;          // the number of the last image asked for
    this.timer = null;
    this.build();
    this.goHome();
  }

  Viewer.prototype.build = function () {
    var self = this, el = this.element;
    el.tabIndex = 0;
    var controls = document.createElement("div");
    controls.className = "embed-controls";
    button(controls, "+", "Zoom in", function () { self.zoomBy(0.5); });
    button(controls, "\u2212", "Zoom out", function () { self.zoomBy(2); });
    button(controls, "\u2302", "Whole dataset", function () { self.goHome(); });
    el.appendChild(controls);
    this.status = document.createElement("div");
    this.status.className = "embed-status";
    this.status.hidden = true;
    this.status.setAttribute("role", "status");
    el.appendChild(this.status);

    var drag = null;
    el.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || event.target.closest(".embed-controls")) {
        return;
      }
      drag = {x: event.clientX, y: event.clientY, id: event.pointerId};
      el.setPointerCapture(event.pointerId);
      el.classList.add("dragging");
    });
    el.addEventListener("pointermove", function (event) {
      if (!drag || event.pointerId !== drag.id) {
        return;
      }
      self.panBy(drag.x - event.clientX, drag.y - event.clientY);
      drag.x = event.clientX;
      drag.y = event.clientY;
    });
    function stop(event) {
      if (drag && event.pointerId === drag.id) {
        drag = null;
        el.classList.remove("dragging");
      }
    }
    el.addEventListener("pointerup", stop);
    el.addEventListener("pointercancel", stop);
    el.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = el.getBoundingClientRect();
      var steps = clamp(event.deltaY / (event.deltaMode === 1 ? 3 : 100), -2, 2);
      self.zoomAt(event.clientX - rect.left, event.clientY - rect.top, Math.pow(1.5, steps));
    }, {passive: false});
    el.addEventListener("dblclick", function (event) {
      var rect = el.getBoundingClientRect();
      self.zoomAt(event.clientX - rect.left, event.clientY - rect.top, event.shiftKey ? 2 : 0.5);
    });
    el.addEventListener("keydown", function (event) {
      var w = el.clientWidth / 4, h = el.clientHeight / 4;
      var moves = {ArrowLeft: [-w, 0], ArrowRight: [w, 0], ArrowUp: [0, -h], ArrowDown: [0, h]};
      if (moves[event.key]) {
        self.panBy(moves[event.key][0], moves[event.key][1]);
      } else if (event.key === "+" || event.key === "=") {
        self.zoomBy(0.5);
      } else if (event.key === "-") {
        self.zoomBy(2);
      } else if (event.key === "0" || event.key === "Home") {
        self.goHome();
      } else {
        return;
      }
      event.preventDefault();
    });
    window.addEventListener("resize", function () {
      self.changed();
    });
  };

  Viewer.prototype.size = function () {
    return [Math.max(1, this.element.clientWidth), Math.max(1, this.element.clientHeight)];
  };

  Viewer.prototype.goHome = function () {
    var size = this.size(), box = this.home;
    var res = Math.max((box[2] - box[0]) / size[0], (box[3] - box[1]) / size[1]) * 1.05;
    this.res = clamp(res > 0 ? res : this.maxRes / 65536, this.minRes, this.maxRes);
    this.cx = (box[0] + box[2]) / 2;
    this.cy = (box[1] + box[3]) / 2;
    this.changed();
  };

  Viewer.prototype.panBy = function (dx, dy) {
    this.cx += dx * this.res;
    this.cy -= dy * this.res;
    this.changed();
  };

  Viewer.prototype.zoomBy = function (factor) {
    var size = this.size();
    this.zoomAt(size[0] / 2, size[1] / 2, factor);
  };

  /* Zoom by ``factor`` (below 1: closer) keeping the point under (px, py) in place. */
  Viewer.prototype.zoomAt = function (px, py, factor) {
    var size = this.size();
    var wx = this.cx + (px - size[0] / 2) * this.res;
    var wy = this.cy - (py - size[1] / 2) * this.res;
    this.res = clamp(this.res * factor, this.minRes, this.maxRes);
    this.cx = wx - (px - size[0] / 2) * this.res;
    this.cy = wy + (py - size[1] / 2) * this.res;
    this.changed();
  };

  /* The view moved: keep its centre on the world, move the shown image, ask for a new one soon. */
  Viewer.prototype.changed = function () {
    var self = this;
    this.cx = clamp(this.cx, this.world[0], this.world[2]);
    this.cy = clamp(this.cy, this.world[1], this.world[3]);
    if (this.front) {
      this.place(this.front);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(function () { self.draw(); }, REST_MS);
  };

  Viewer.prototype.place = function (shown) {
    var size = this.size();
    var x0 = this.cx - size[0] / 2 * this.res, y1 = this.cy + size[1] / 2 * this.res;
    var scale = shown.res / this.res;
    var left = (shown.x0 - x0) / this.res, top = (y1 - shown.y1) / this.res;
    shown.img.style.width = shown.width + "px";
    shown.img.style.height = shown.height + "px";
    shown.img.style.transformOrigin = "0 0";
    shown.img.style.transform = "translate(" + left + "px," + top + "px) scale(" + scale + ")";
  };

  Viewer.prototype.draw = function () {
    var self = this, size = this.size();
    var ratio = Math.min(window.devicePixelRatio || 1, 2);
    var width = Math.min(MAX_PIXELS, Math.round(size[0] * ratio));
    var height = Math.min(MAX_PIXELS, Math.round(size[1] * ratio));
    var res = this.res;
    var x0 = this.cx - size[0] / 2 * res, x1 = this.cx + size[0] / 2 * res;
    var y0 = this.cy - size[1] / 2 * res, y1 = this.cy + size[1] / 2 * res;
    var url = this.wms + "?service=WMS&version=1.1.1&request=GetMap&layers=" + encodeURIComponent(this.layer) +
      "&styles=&srs=" + encodeURIComponent(this.crs) + "&bbox=" + [x0, y0, x1, y1].join(",") +
      "&width=" + width + "&height=" + height + "&format=image%2Fpng&transparent=true";
    var number = ++this.asked;
    var img = new Image();
    img.className = "embed-layer";
    img.alt = "";
    img.draggable = false;
    this.say("Loading\u2026");
    img.onload = function () {
      if (number !== self.asked) {
        return;
      }
      var shown = {img: img, x0: x0, y1: y1, res: res, width: size[0], height: size[1]};
      self.place(shown);
      self.element.insertBefore(img, self.element.firstChild);
      if (self.front) {
        self.element.removeChild(self.front.img);
      }
      self.front = shown;
      self.say("");
    };
    img.onerror = function () {
      if (number === self.asked) {
        self.say("The map could not be drawn.");
      }
    };
    img.src = url;
  };

  Viewer.prototype.say = function (text) {
    this.status.textContent = text;
    this.status.hidden = !text;
  };

  function start() {
    var maps = document.querySelectorAll(".embed-map[data-wms]");
    for (var i = 0; i < maps.length; i++) {
      new Viewer(maps[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
