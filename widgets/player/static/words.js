// The title and sentence of each forward record and backward step, written in
// the page (part of the player's ES module, after health.js, before
// controls.js; see html_export.JS_PARTS). A page made straight from a tape
// (html_export, `replay(..., words=False)`) leaves them out: 20,000 strings
// made in Python were a tenth of a 10,000-record export and of its JSON.
// The words are widgets/player/data/sentences.py's, letter for letter
// (tests/browser/test_page_words.py compares every frame of several tapes);
// the seed and result frames keep Python's. Nothing here computes a number:
// every value is a preview string the replay made.

// Gives every frame without them a `title` and a `sentence`, written when first read (unpacked data: named
// entries, values {preview, shape?}; a value's shape left out is its node's).
function fillWords(data) {
  if (!data.frames.some((f) => f.sentence === undefined)) return data;
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  const tapeNames = (data.tapes || []).map((t) => t.name);
  const nTapes = Math.max(1, tapeNames.length);
  const inputs = new Map(), outputs = new Map();      // op id -> tensor names by slot
  for (const e of data.edges) {
    const m = e.kind === "in" ? inputs : outputs;
    if (!m.has(e.op)) m.set(e.op, []);
    m.get(e.op)[e.slot] = byId.get(e.tensor).name;
  }
  // Each frame's words are written the first time something reads them (a getter):
  // the player reads the frame it shows; classroom mode reads every sentence once.
  const write = (f, op, step) => {
    if (f.phase === "forward") {
      const [tape, index] = op.records[0];
      let title = `${recordName(tapeNames, tape, index)}: ${(outputs.get(op.id) || []).join(", ")} = ` +
        `${op.op_type}(${(inputs.get(op.id) || []).join(", ")})`;
      if (nTapes > 1) title += `  [${[...new Set(op.tapes)].sort((a, b) => a - b).map((t) => tapeNames[t]).join(" + ")}]`;
      return { title, sentence: forwardSentence(op, f.outputs || [], op.tapes.map((t) => tapeNames[t]), nTapes, tapeNames) };
    }
    return { title: `backward ${step}: ${op.op_type} (${recordName(tapeNames, 0, f.record)})`,
      sentence: backwardSentence(op, f.cotangents, f.contributions, f.totals, byId) };
  };
  let step = 0;
  for (const f of data.frames) {
    if (f.phase === "backward") step += 1;
    if (f.sentence !== undefined || !f.op || (f.phase !== "forward" && f.phase !== "backward")) continue;
    const op = byId.get(f.op), k = step;
    let words = null;
    for (const key of ["title", "sentence"]) {
      Object.defineProperty(f, key, { enumerable: true, configurable: true,
        get: () => (words || (words = write(f, op, k)))[key],
        set: (value) => { Object.defineProperty(f, key, { value, writable: true, enumerable: true, configurable: true }); } });
    }
  }
  return data;
}

function recordName(tapeNames, tape, index) {
  return tapeNames.length > 1 ? `${tapeNames[tape]}, record ${index + 1}` : `record ${index + 1}`;
}

function wordList(items) {
  return items.length <= 1 ? items.join("") : items.slice(0, -1).join(", ") + " and " + items[items.length - 1];
}

function wordTimes(n) {
  return n === 2 ? "twice" : n === 3 ? "three times" : `${n} times`;
}

const pyText = (v) => (v === null || v === undefined ? "None" : v);

// How a sentence says a value (sentences._preview): its numbers when few, else its shape.
function sayValue(value, node) {
  if (value === null || value === undefined) return null;
  const shape = (value.shape !== undefined ? value.shape : node && node.shape) || [];
  const size = shape.reduce((a, d) => a * d, 1);
  const preview = value.preview === undefined ? null : value.preview;
  if (preview === null && !shape.length) return "a scalar";
  if (size > 4 || preview === null) return "a (" + shape.join(", ") + (shape.length === 1 ? "," : "") + ") array";
  return preview;
}

function forwardSentence(op, outputs, opTapes, nTapes, tapeNames) {
  const shown = outputs.map((o) => (o.value !== null && o.value !== undefined ? `${o.name} = ${o.value}` : o.name));
  const first = outputs.length === 1 ? shown[0].split(" = ")[0] : null;
  const what = first !== null && op.label !== first
    ? `${first} = ${op.label}` + (outputs[0].value ? ` = ${outputs[0].value}` : "") : wordList(shown);
  const [tape, index] = op.records[0];
  const name = recordName(tapeNames.length ? tapeNames : ["tape 1"], tape, index);
  let sentence = `${name[0].toUpperCase()}${name.slice(1)}: ${op.op_type} computes ${what}`;
  if (nTapes > 1) {
    const unique = [...new Set(opTapes)];
    sentence += ` (recorded by ${wordList(unique)}` + (unique.length < nTapes ? " only)" : ")");
  }
  sentence += ".";
  if (!op.differentiable) sentence += ` ${op.op_type} passes values on, but no gradient will flow back through it.`;
  return sentence;
}

function backwardSentence(op, cotangents, contributions, totals, byId) {
  const say = (c) => sayValue(c.value, byId.get(c.node));
  const values = cotangents.filter((c) => c.value !== null && c.value !== undefined).map(say);
  let arrived = values.length === 1 ? values[0] : "(" + values.join(", ") + ")";
  const word = values.length === 1 ? "cotangent" : "cotangents";
  const outs = cotangents.map((c) => c.name).join(", ");
  const where = outs !== op.label ? `${op.op_type} (${outs} = ${op.label})` : op.op_type;
  arrived = arrived.startsWith("a ") ? `, ${arrived},` : " " + arrived;
  const start = `The ${word}${arrived} arrive${values.length === 1 ? "s" : ""} at ${where}`;
  if (!op.differentiable) {
    return `${start}; ${op.op_type} has no gradient, so nothing flows back from here (the path to its inputs is cut).`;
  }
  const totalOf = new Map(), rawTotal = new Map();
  for (const t of totals) {
    totalOf.set(t.node, say(t));
    rawTotal.set(t.node, t.value ? (t.value.preview === undefined ? null : t.value.preview) : null);
  }
  const groups = new Map();
  for (const c of contributions) {
    if (!groups.has(c.node)) groups.set(c.node, []);
    groups.get(c.node).push(c);
  }
  const sent = [], nothing = [];
  for (const [node, group] of groups) {
    const name = group[0].name;
    const given = group.filter((c) => c.value !== null && c.value !== undefined);
    const shown = given.map(say), raw = given.map((c) => (c.value.preview === undefined ? null : c.value.preview));
    if (!shown.length) nothing.push(`nothing to ${name} (${whyNothing(byId.get(node))})`);
    else if (group.length > 1) {
      const amount = new Set(shown).size === 1 ? shown[0] : wordList(shown);
      const times = wordTimes(group.length);
      sent.push(`${amount} to ${name} ${times} (${name} is used ${times}; ${name} now holds ` +
        `${pyText(totalOf.get(node))} in total)`);
    } else {
      let text = `${shown[0]} to ${name}`;
      const before = rawTotal.has(node) ? rawTotal.get(node) : null;
      if (before !== null && before !== raw[0]) text += ` (added to what ${name} already had: ${pyText(totalOf.get(node))} in total)`;
      sent.push(text);
    }
  }
  const rule = op.rule !== undefined ? op.rule : op.doc;
  const vjp = rule ? `its VJP, ${rule},` : "its VJP";
  return `${start}; ${vjp} sends ${wordList(sent.concat(nothing)) || "nothing"}.`;
}

function whyNothing(node) {
  const flags = node ? node.flags : [];
  if (flags.includes("integer")) return "an integer tensor carries no gradient";
  if (flags.includes("constant")) return "a constant: no source depends on it";
  return "it does not lead to a source";
}
