#include "compiler/passes/expand_einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/rewrite.h"

namespace seqrt {

bool is_einsum_to_expand(const Node& node) {
  return node.domain == kOnnxDomain && node.op == "Einsum" &&
         node.inputs.size() >= 3;
}

namespace {

// In a parsed term, "..." as one character; letters stand for themselves.
constexpr char kEllipsis = '.';

// An equation without spaces, its implicit output made explicit. The steps
// spell the output out so that no step's implicit rule (letters used once)
// can differ from the whole equation's.
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

bool has(const std::string& term, char label) {
  return term.find(label) != std::string::npos;
}

// Letters and at most one "...", as the Einsum op parses a term.
std::optional<std::string> parse_term(const std::string& text) {
  std::string term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::isalpha(static_cast<unsigned char>(text[i]))) {
      term += text[i];
    } else if (text.compare(i, 3, "...") == 0 && !has(term, kEllipsis)) {
      term += kEllipsis;
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return term;
}

// Implicit output: "..." if any operand has it, then the letters used once
// in all, in character order (as the op's reference kernel orders them).
std::string implicit_output(const std::vector<std::string>& inputs) {
  std::map<char, int> counts;
  bool ellipsis = false;
  for (const std::string& term : inputs) {
    for (char label : term) {
      if (label == kEllipsis) {
        ellipsis = true;
      } else {
        ++counts[label];
      }
    }
  }
  std::string out = ellipsis ? std::string(1, kEllipsis) : "";
  for (const auto& [label, count] : counts) {
    if (count == 1) out += label;
  }
  return out;
}

// An explicit output names each label of the operands at most once.
bool valid_output(const std::vector<std::string>& inputs,
                  const std::string& output) {
  for (size_t i = 0; i < output.size(); ++i) {
    if (output.find(output[i], i + 1) != std::string::npos) return false;
    bool known = std::any_of(
        inputs.begin(), inputs.end(),
        [&](const std::string& term) { return has(term, output[i]); });
    if (!known) return false;
  }
  return true;
}

// nullopt where the op itself would reject the equation's text or its
// operand count; rank checks need shapes and are left to the op.
std::optional<Equation> parse_equation(std::string text, size_t operands) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  Equation eq;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    std::optional<std::string> term =
        parse_term(lhs.substr(start, comma - start));
    if (!term) return std::nullopt;
    eq.inputs.push_back(*term);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (eq.inputs.size() != operands) return std::nullopt;
  if (arrow == std::string::npos) {
    eq.output = implicit_output(eq.inputs);
    return eq;
  }
  std::optional<std::string> output = parse_term(text.substr(arrow + 2));
  if (!output || !valid_output(eq.inputs, *output)) return std::nullopt;
  eq.output = *output;
  return eq;
}

// The labels of `a` and `b` that `needed` holds: "..." first, then letters
// in the order they first appear.
std::string kept_labels(const std::string& a, const std::string& b,
                        const std::string& needed) {
  const std::string both = a + b;
  std::string out;
  if (has(both, kEllipsis) && has(needed, kEllipsis)) out += kEllipsis;
  for (char label : both) {
    if (label != kEllipsis && has(needed, label) && !has(out, label)) {
      out += label;
    }
  }
  return out;
}

std::string term_text(const std::string& term) {
  std::string text;
  for (char label : term) {
    text += label == kEllipsis ? std::string("...") : std::string(1, label);
  }
  return text;
}

// The equation of each step: step i contracts the running result with
// operand i + 1; the last writes the node's output.
std::vector<std::string> step_equations(const Equation& eq) {
  const size_t n = eq.inputs.size();
  // needed[i]: the labels of the output and of operands i and later.
  std::vector<std::string> needed(n + 1, eq.output);
  for (size_t i = n; i-- > 0;) needed[i] = needed[i + 1] + eq.inputs[i];
  std::vector<std::string> steps;
  std::string acc = eq.inputs[0];
  for (size_t i = 1; i < n; ++i) {
    const std::string out =
        i + 1 == n ? eq.output : kept_labels(acc, eq.inputs[i], needed[i + 1]);
    steps.push_back(term_text(acc) + "," + term_text(eq.inputs[i]) + "->" +
                    term_text(out));
    acc = out;
  }
  return steps;
}

Node make_einsum(const std::string& name, const std::string& equation,
                 ValueId a, ValueId b, ValueId output) {
  Node node;
  node.name = name;
  node.op = "Einsum";
  node.domain = kOnnxDomain;
  node.inputs = {a, b};
  node.outputs = {output};
  node.attrs["equation"] = Attribute(equation);
  return node;
}

// The equation of a node this pass can expand, or nullopt.
std::optional<Equation> expandable(const Node& node) {
  if (!is_einsum_to_expand(node) || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Attribute* equation = node.attr("equation");
  if (equation == nullptr || equation->type() != AttrType::kString) {
    return std::nullopt;
  }
  return parse_equation(equation->as_string(), node.inputs.size());
}

// The replacement of one node, appended to `added`.
void expand(Graph& graph, const Node& node, const Equation& eq,
            std::vector<Node>& added) {
  const std::string base = node.name.empty() ? node.op : node.name;
  const std::vector<std::string> steps = step_equations(eq);
  ValueId acc = node.inputs[0];
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const bool last = i + 1 == node.inputs.size();
    const ValueId next =
        last ? node.outputs[0]
             : add_fresh_value(graph, base + "_partial" + std::to_string(i));
    const std::string name = last ? base : graph.value(next).name;
    added.push_back(make_einsum(name, steps[i - 1], acc, node.inputs[i], next));
    acc = next;
  }
}

}  // namespace

Result<bool> expand_einsum(Graph& graph) {
  std::set<int> expanded;
  std::vector<Node> added;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node node = graph.nodes[i];  // a copy: expand() adds values
    std::optional<Equation> eq = expandable(node);
    if (!eq) continue;
    expand(graph, node, *eq, added);
    expanded.insert(static_cast<int>(i));
  }
  if (expanded.empty()) return false;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, expanded, std::move(added)));
  return true;
}

}  // namespace seqrt
