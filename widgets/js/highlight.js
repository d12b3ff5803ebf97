// A small tokenizer highlighter for the languages a trace holds: Python (wrapper,
// FX code, Triton kernels, loop-IR bodies) and C++ (CPU kernels). It returns
// tokens; the caller turns them into text nodes inside <span class="tok-...">.

const PY_KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except " +
    "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield").split(" "),
);
const CPP_KEYWORDS = new Set(
  ("auto bool break case char const constexpr continue decltype default do double else enum extern " +
    "float for if inline int int8_t int16_t int32_t int64_t long namespace nullptr return short signed " +
    "sizeof static static_cast reinterpret_cast struct switch template typename uint8_t uint32_t uint64_t " +
    "unsigned using void volatile while true false").split(" "),
);

const RULES = {
  python: [
    ["comment", /#[^\n]*/y],
    ["string", /[rRbBuUfF]{0,2}("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)/y],
    ["decorator", /@[A-Za-z_][\w.]*/y],
    ["number", /(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)[jJlL]?/y],
    ["word", /[A-Za-z_]\w*/y],
    ["space", /\s+/y],
    ["punct", /[^\sA-Za-z_0-9]/y],
  ],
  cpp: [
    ["comment", /\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/y],
    ["preproc", /#\s*[A-Za-z_]+[^\n]*/y],
    ["string", /"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?/y],
    ["number", /(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)[fFlLuU]*/y],
    ["word", /[A-Za-z_]\w*/y],
    ["space", /\s+/y],
    ["punct", /[^\sA-Za-z_0-9]/y],
  ],
};

/** Map a trace language to a tokenizer. */
export function languageOf(kind) {
  return kind === "cpp" || kind === "c++" || kind === "cuda" ? "cpp" : "python";
}

/**
 * Tokenize `source` and return an array of lines, each an array of [type, text].
 * Multi-line tokens (docstrings, block comments) are split at newlines so every
 * line can be rendered (and highlighted) on its own.
 */
export function tokenizeLines(source, language) {
  const rules = RULES[languageOf(language)];
  const keywords = languageOf(language) === "cpp" ? CPP_KEYWORDS : PY_KEYWORDS;
  const lines = [[]];
  const src = String(source ?? "");
  let pos = 0;
  while (pos < src.length) {
    let matched = false;
    for (const [type, re] of rules) {
      re.lastIndex = pos;
      const m = re.exec(src);
      if (!m || m[0].length === 0) continue;
      let kind = type;
      if (type === "word") {
        if (keywords.has(m[0])) kind = "keyword";
        else if (src[re.lastIndex] === "(") kind = "call";
        else kind = "name";
      }
      const parts = m[0].split("\n");
      parts.forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (part) lines[lines.length - 1].push([kind, part]);
      });
      pos = re.lastIndex;
      matched = true;
      break;
    }
    if (!matched) {
      lines[lines.length - 1].push(["punct", src[pos]]);
      pos += 1;
    }
  }
  if (src.endsWith("\n")) lines.pop();
  return lines;
}
