/// The console's style sheet and script, served by the console itself (no build step, nothing from elsewhere).
public enum ConsoleAssets {
    public static let styleSheet = """
        :root { color-scheme: light dark; --accent: #2b6cb0; --held: #e53e3e; --muted: #718096; }
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 0 1rem 2rem; }
        header h1 { margin: 1rem 0 0.2rem; font-size: 1.5rem; }
        #serve-state:empty { display: none; }
        #serve-state, #notice { background: #fed7d7; color: #742a2a; padding: 0.4rem 0.6rem; border-radius: 4px; }
        #notice:empty { display: none; }
        #refusal { border-left: 4px solid #c53030; padding: 0.2rem 0.8rem; }
        h2 { font-size: 1.15rem; margin: 1.4rem 0 0.5rem; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0; }
        dt { color: var(--muted); }
        dd { margin: 0; }
        .warning { border-left: 4px solid #dd6b20; padding: 0.2rem 0.8rem; background: rgba(221, 107, 32, 0.08); }
        .code strong { font: 700 2rem ui-monospace, monospace; letter-spacing: 0.12em; }
        button { font: inherit; padding: 0.3rem 0.9rem; border-radius: 4px; border: 1px solid var(--accent);
                 background: var(--accent); color: white; cursor: pointer; }
        button.revoke { background: transparent; color: #c53030; border-color: #c53030; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid rgba(128, 128, 128, 0.3);
                 vertical-align: top; }
        td.connected { color: #2f855a; font-weight: 600; }
        code.key { font-size: 0.8em; color: var(--muted); word-break: break-all; }
        ul.client-pads { margin: 0; padding-left: 1rem; }
        .problem { color: #c53030; }
        #pad-list { display: flex; flex-wrap: wrap; gap: 1rem; }
        .pad { border: 1px solid rgba(128, 128, 128, 0.4); border-radius: 8px; padding: 0.5rem 0.8rem; width: 22rem; }
        .pad h3 { font-size: 1rem; margin: 0 0 0.3rem; }
        .pad .who { color: var(--muted); font-size: 0.85em; }
        .pad svg { width: 100%; height: auto; }
        .pad svg .part { fill: rgba(128, 128, 128, 0.25); stroke: rgba(128, 128, 128, 0.8); stroke-width: 1; }
        .pad svg .part.held { fill: var(--held); }
        .pad svg .dot { fill: var(--accent); }
        .pad svg .fill { fill: var(--held); }
        .pad svg text { font: 9px system-ui, sans-serif; fill: currentColor; text-anchor: middle; pointer-events: none; }
        .pad .rumble { display: flex; gap: 0.5rem; align-items: center; font-size: 0.85em; }
        .pad .meter { flex: 1; height: 0.5rem; background: rgba(128, 128, 128, 0.25); border-radius: 3px; overflow: hidden; }
        .pad .meter span { display: block; height: 100%; width: 0; background: #dd6b20; }
        .pad.rumbling { box-shadow: 0 0 0 3px #dd6b20; }
        .pad.lingering { opacity: 0.5; }
        .paired { font-size: 0.8em; color: var(--muted); }

        """

    /// Takes the token from the address's fragment into the tab's `sessionStorage` (and out of the address bar), sends
    /// it in the `X-Padbridge-Token` header with every request, fetches the host section (server-rendered, from
    /// `/fragment/host`) and again on `status` events, sends the pairing and revoke forms with `fetch`, opens the live
    /// view with a single-use ticket, draws each live pad from its `live` events and keeps each client's link figures
    /// current.
    public static let script = #"""
        "use strict";
        const tokenKey = "padbridge-console-token";
        // The token comes in the fragment (never sent to a server); it is kept for this tab, for this origin only, and
        // taken out of the address bar.
        function takeToken() {
          const match = /(?:^#|&)token=([0-9A-Fa-f]{32,128})(?:&|$)/.exec(location.hash);
          if (!match) return false;
          sessionStorage.setItem(tokenKey, match[1]);
          history.replaceState(null, "", location.pathname + location.search);
          return true;
        }
        takeToken();
        // The address with the token opened over this page (only its fragment changes, so no new page loads).
        window.addEventListener("hashchange", () => { if (takeToken()) location.reload(); });
        const token = sessionStorage.getItem(tokenKey);
        const hostSection = document.getElementById("host");
        const notice = document.getElementById("notice");
        let refused = false;

        function request(path, options = {}) {
          return fetch(path, { cache: "no-store", credentials: "omit", ...options,
                               headers: { "X-Padbridge-Token": token, ...(options.headers || {}) } });
        }

        // The reason in one of the console's refusal or failure pages.
        function reasonIn(html) {
          const page = new DOMParser().parseFromString(html, "text/html");
          const reason = page.querySelector("#refusal, #failure");
          return reason ? reason.textContent : "the console answered " + html.slice(0, 200);
        }

        function refuse(reason) {
          refused = true;
          const paragraph = document.createElement("p");
          paragraph.id = "refusal";
          paragraph.textContent = reason;
          hostSection.replaceChildren(paragraph);
        }

        const svgNS = "http://www.w3.org/2000/svg";
        const padList = document.getElementById("pad-list");
        const noPads = document.getElementById("no-pads");
        const serveState = document.getElementById("serve-state");
        const drawn = new Map();
        const counts = new Map();

        // Buttons: [SDL name, shape, x, y, width or radius, height, label].
        const buttonParts = [
          ["a", "circle", 250, 112, 10, 0, "A"], ["b", "circle", 272, 90, 10, 0, "B"],
          ["x", "circle", 228, 90, 10, 0, "X"], ["y", "circle", 250, 68, 10, 0, "Y"],
          ["dpup", "rect", 62, 62, 14, 18, ""], ["dpdown", "rect", 62, 98, 14, 18, ""],
          ["dpleft", "rect", 42, 82, 18, 14, ""], ["dpright", "rect", 78, 82, 18, 14, ""],
          ["leftshoulder", "rect", 30, 30, 60, 12, "L1"], ["rightshoulder", "rect", 230, 30, 60, 12, "R1"],
          ["back", "rect", 126, 86, 16, 9, ""], ["start", "rect", 178, 86, 16, 9, ""],
          ["guide", "circle", 160, 120, 9, 0, ""], ["misc1", "rect", 152, 138, 16, 8, ""],
          ["leftstick", "circle", 110, 140, 22, 0, ""], ["rightstick", "circle", 210, 140, 22, 0, ""],
          ["touchpad", "rect", 122, 36, 76, 40, ""],
          ["paddle1", "rect", 196, 172, 14, 8, ""], ["paddle2", "rect", 110, 172, 14, 8, ""],
          ["paddle3", "rect", 214, 172, 14, 8, ""], ["paddle4", "rect", 92, 172, 14, 8, ""],
        ];

        function element(name, attributes) {
          const node = document.createElementNS(svgNS, name);
          for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
          return node;
        }

        function drawing() {
          const svg = element("svg", { viewBox: "0 0 320 190", role: "img" });
          for (const side of ["left", "right"]) {
            const x = side === "left" ? 30 : 230;
            svg.appendChild(element("rect", { class: "part", x, y: 8, width: 60, height: 14, "data-trigger-frame": side }));
            svg.appendChild(element("rect", { class: "fill", x, y: 8, width: 0, height: 14, "data-trigger": side }));
          }
          for (const [name, shape, x, y, a, b, label] of buttonParts) {
            const part = shape === "circle"
              ? element("circle", { class: "part", cx: x, cy: y, r: a, "data-button": name })
              : element("rect", { class: "part", x, y, width: a, height: b, rx: 2, "data-button": name });
            svg.appendChild(part);
            if (label) {
              const text = element("text", { x: shape === "circle" ? x : x + a / 2, y: (shape === "circle" ? y : y + b / 2) + 3 });
              text.textContent = label;
              svg.appendChild(text);
            }
          }
          for (const [side, x] of [["left", 110], ["right", 210]]) {
            svg.appendChild(element("circle", { class: "dot", cx: x, cy: 140, r: 6, "data-stick": side }));
          }
          for (const index of [0, 1]) {
            svg.appendChild(element("circle", { class: "dot", cx: 0, cy: 0, r: 3, visibility: "hidden", "data-touch": index }));
          }
          return svg;
        }

        function padCard(pad) {
          const card = document.createElement("article");
          card.className = "pad";
          card.dataset.pad = pad.id;
          card.dataset.client = pad.client;
          const title = document.createElement("h3");
          title.textContent = pad.name + " ";
          const who = document.createElement("span");
          who.className = "who";
          who.textContent = pad.kind + " from " + pad.client;
          title.appendChild(who);
          card.appendChild(title);
          const svg = drawing();
          // Only pads with a touchpad (DualSense, DualShock 4) get one drawn.
          if (!/dualsense|dualshock/i.test(pad.kind)) svg.querySelector('[data-button="touchpad"]').remove();
          card.appendChild(svg);
          const rumble = document.createElement("div");
          rumble.className = "rumble";
          rumble.innerHTML = 'Rumble <span class="meter"><span data-motor="strong"></span></span>'
            + '<span class="meter"><span data-motor="weak"></span></span>';
          card.appendChild(rumble);
          return card;
        }

        function show(card, pad) {
          const held = new Set(pad.buttons);
          for (const part of card.querySelectorAll("[data-button]")) {
            part.classList.toggle("held", held.has(part.dataset.button));
          }
          for (const [side, x] of [["left", 110], ["right", 210]]) {
            const dot = card.querySelector(`[data-stick="${side}"]`);
            dot.setAttribute("cx", x + (pad.axes[side + "x"] / 32768) * 20);
            dot.setAttribute("cy", 140 + (pad.axes[side + "y"] / 32768) * 20);
          }
          for (const side of ["left", "right"]) {
            card.querySelector(`[data-trigger="${side}"]`).setAttribute("width", 60 * pad.axes[side + "trigger"] / 32767);
          }
          for (const index of [0, 1]) {
            const dot = card.querySelector(`[data-touch="${index}"]`);
            const touch = pad.touches[index];
            dot.setAttribute("visibility", touch ? "visible" : "hidden");
            if (touch) { dot.setAttribute("cx", 122 + touch.x * 76); dot.setAttribute("cy", 36 + touch.y * 40); }
          }
          const rumble = pad.rumble || { strong: 0, weak: 0 };
          card.querySelector('[data-motor="strong"]').style.width = (rumble.strong * 100) + "%";
          card.querySelector('[data-motor="weak"]').style.width = (rumble.weak * 100) + "%";
          card.classList.toggle("rumbling", rumble.strong > 0 || rumble.weak > 0);
          card.classList.toggle("lingering", pad.lingering);
          if (pad.lightbar) card.style.borderColor = pad.lightbar;
        }

        function drawLive(live) {
          const seen = new Set();
          for (const pad of live.pads) {
            const key = pad.client + "/" + pad.id;
            seen.add(key);
            let card = drawn.get(key);
            if (!card) { card = padCard(pad); drawn.set(key, card); padList.appendChild(card); }
            show(card, pad);
          }
          for (const [key, card] of drawn) {
            if (!seen.has(key)) { card.remove(); drawn.delete(key); }
          }
          noPads.hidden = drawn.size > 0;
          const now = performance.now();
          for (const client of live.clients) {
            const row = document.querySelector(`tr.client[data-key="${CSS.escape(client.key)}"]`);
            if (!row) continue;
            row.querySelector(".heard").textContent =
              client.lastHeardMillisecondsAgo == null ? "–" : client.lastHeardMillisecondsAgo + " ms ago";
            row.querySelector(".round-trip").textContent =
              client.roundTripMicroseconds == null ? "–" : (client.roundTripMicroseconds / 1000).toFixed(1) + " ms";
            const percent = (value) => value == null ? "–" : value.toFixed(1) + " %";
            row.querySelector(".loss").textContent =
              percent(client.lossToHostPercent) + " / " + percent(client.lossToClientPercent);
            const last = counts.get(client.key);
            if (last && now - last.at >= 900) {
              const seconds = (now - last.at) / 1000;
              const received = Math.max(0, client.receivedDatagrams - last.received) / seconds;
              const sent = Math.max(0, client.sentDatagrams - last.sent) / seconds;
              row.querySelector(".rate").textContent = received.toFixed(0) + " / " + sent.toFixed(0);
            }
            if (!last || now - last.at >= 900) {
              counts.set(client.key, { at: now, received: client.receivedDatagrams, sent: client.sentDatagrams });
            }
          }
        }

        let shownHost = null;
        let refreshing = false;
        let refreshAgain = false;
        async function refreshHost() {
          if (refused) return;
          if (refreshing) { refreshAgain = true; return; }
          refreshing = true;
          try {
            const response = await request("/fragment/host");
            if (response.status === 403) { refuse(reasonIn(await response.text())); return; }
            if (response.ok) {
              // Replaced only when something other than the uptime changed, so a button is never swapped under a
              // pointer for nothing.
              const fresh = await response.text();
              const withoutUptime = (html) => html.replace(/<dd id="uptime">[^<]*<\/dd>/, "");
              if (shownHost === null || withoutUptime(fresh) !== withoutUptime(shownHost)) hostSection.innerHTML = fresh;
              shownHost = fresh;
              const facts = document.getElementById("host-facts");
              const title = facts ? "padbridge · " + facts.dataset.name : "padbridge console";
              document.title = title;
              document.getElementById("title").textContent = title;
            }
          } catch (error) {
            serveState.textContent = "The console stopped answering; trying again…";
          } finally {
            refreshing = false;
            if (refreshAgain) { refreshAgain = false; refreshHost(); }
          }
        }

        // Pairing and revoking: the forms are sent with the token in the header; the host section is then fetched again.
        hostSection.addEventListener("submit", async (event) => {
          event.preventDefault();
          const form = event.target;
          try {
            const response = await request(form.getAttribute("action"),
                                           { method: "POST", body: new URLSearchParams(new FormData(form)) });
            notice.textContent = response.ok ? "" : reasonIn(await response.text());
            if (response.status === 403) refuse(notice.textContent);
          } catch (error) {
            notice.textContent = "The console did not answer: " + error;
          }
          refreshHost();
        });

        // The live view: a WebSocket cannot carry the header, so it opens with a single-use ticket got with the token.
        async function connect() {
          if (refused) return;
          let ticket;
          try {
            const response = await request("/events/ticket", { method: "POST" });
            if (response.status === 403) { refuse(reasonIn(await response.text())); return; }
            if (!response.ok) throw new Error("status " + response.status);
            ticket = (await response.text()).trim();
          } catch (error) {
            serveState.textContent = "The console stopped answering; trying again…";
            setTimeout(connect, 1000);
            return;
          }
          const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host
                                       + "/events?ticket=" + encodeURIComponent(ticket));
          socket.onopen = () => { serveState.textContent = ""; };
          socket.onmessage = (message) => {
            const event = JSON.parse(message.data);
            if (event.event === "live") drawLive(event.live);
            else if (event.event === "status") refreshHost();
            else if (event.event === "console") {
              serveState.textContent = event.console.serve ? "" : "No serve answers: " + event.console.problem;
              if (!event.console.serve) drawLive({ pads: [], clients: [] });
              refreshHost();
            }
          };
          socket.onclose = () => {
            if (refused) return;
            serveState.textContent = "The console stopped answering; trying again…";
            setTimeout(connect, 1000);
          };
        }

        if (token) {
          refreshHost();
          connect();
        } else {
          refuse("no token: open the address `padbridge console` printed (it ends in #token=...), or the one "
                 + "`padbridge console --print-url` prints");
        }

        """#
}
