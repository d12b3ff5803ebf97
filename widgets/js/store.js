// Where the views get the parts of a trace (widgets/parts.py): a summary up front, every other
// part when a view first needs it, then cached. Two sources, one interface:
// - the static HTML export embeds each part gzip-compressed and base64-encoded, decoded here on
//   first use (DecompressionStream, built into the browser);
// - the live widget asks Python with a custom message and gets the part back as one binary
//   buffer of UTF-8 JSON.

import { mark } from "./perf.js";

export class Store {
  /** @param {object} summary  @param {(key: string) => Promise<any>} fetchPart */
  constructor(summary, fetchPart) {
    this.summary = summary;
    this.fetchPart = fetchPart;
    this.parts = new Map(); // key -> Promise
    this.values = new Map(); // key -> value, once resolved
    this.pending = 0;
    this.listeners = new Set();
  }

  /** The part `key` (a Promise, cached). */
  get(key) {
    if (!this.parts.has(key)) {
      this._busy(+1);
      mark(`request ${key}`);
      const promise = this.fetchPart(key).then(
        (value) => {
          mark(`part ${key}`);
          this.values.set(key, value);
          this._busy(-1);
          return value;
        },
        (error) => {
          this.parts.delete(key);
          this._busy(-1);
          throw error;
        },
      );
      this.parts.set(key, promise);
    }
    return this.parts.get(key);
  }

  /** The part if it has arrived, else undefined (for code that must not wait). */
  peek(key) {
    return this.values.get(key);
  }

  all(keys) {
    return Promise.all(keys.map((k) => this.get(k)));
  }

  /** Call `fn(pendingCount)` whenever the number of parts in flight changes. */
  onPending(fn) {
    this.listeners.add(fn);
  }

  _busy(delta) {
    this.pending += delta;
    for (const fn of this.listeners) fn(this.pending);
  }
}

function base64Bytes(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function gunzipJson(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/** Parts embedded in the page: {key: base64(gzip(json))}. */
export function embeddedParts(encoded) {
  return async (key) => {
    const text = encoded[key];
    if (text === undefined) throw new Error(`This export holds no part ${key}.`);
    return gunzipJson(base64Bytes(text));
  };
}

/**
 * Parts from Python over the widget's comm. Replies for an older revision (another compilation was
 * shown meanwhile) are refused by Python and rejected here.
 */
export function commParts(model) {
  const waiting = new Map();
  let next = 0;
  const decoder = new TextDecoder();
  const onMessage = (msg, buffers) => {
    if (!msg || msg.type !== "part" || !waiting.has(msg.id)) return;
    mark(`received ${msg.key}`);
    const { resolve, reject } = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.error) reject(new Error(msg.error));
    else resolve(JSON.parse(decoder.decode(buffers[0])));
  };
  model.on("msg:custom", onMessage);
  const fetchPart = (key) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      model.send({ type: "part", key, id, revision: model.get("revision") });
    });
  fetchPart.close = () => model.off("msg:custom", onMessage);
  return fetchPart;
}
