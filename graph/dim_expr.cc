#include "graph/dim_expr.h"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace seqrt {
namespace {

// Past these the result is unknown: shape arithmetic stays tiny, and the
// table of produced names stays small.
constexpr size_t kMaxTerms = 8;
constexpr size_t kMaxDegree = 4;
constexpr int kMaxDivisionSteps = 16;

// Canonical names produced by to_dim(), so from_dim() can read them back;
// every other symbol name is an atom.
struct NameTable {
  std::mutex mutex;
  std::map<std::string, DimExpr> expressions;
};

NameTable& name_table() {
  static NameTable* table = new NameTable();  // never destroyed: used at exit
  return *table;
}

bool is_identifier(const std::string& name) {
  if (name.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

// An atom as it appears inside an expression: plain identifiers as they
// are, anything else bracketed with '\' escaping '\' and ']'.
std::string render_atom(const std::string& name) {
  if (is_identifier(name)) return name;
  std::string out = "[";
  for (char c : name) {
    if (c == '\\' || c == ']') out += '\\';
    out += c;
  }
  return out + "]";
}

bool checked_mul(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
bool checked_add(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

}  // namespace

DimExpr::DimExpr(int64_t value) : unknown_(false) {
  if (value != 0) terms_[{}] = value;
}

DimExpr DimExpr::atom(std::string name) {
  DimExpr out(0);
  out.terms_[{std::move(name)}] = 1;
  return out;
}

namespace {

// Value atoms are spelt with a prefix no identifier has; a user dim of
// that spelling reads as a value atom, which only loses information.
constexpr char kValueAtomPrefix[] = "value of ";

bool is_value_atom(const std::string& name) {
  return name.rfind(kValueAtomPrefix, 0) == 0;
}

}  // namespace

DimExpr DimExpr::value_atom(const std::string& input_name) {
  return atom(kValueAtomPrefix + input_name);
}

bool DimExpr::uses_value() const {
  for (const auto& [monomial, coefficient] : terms_) {
    for (const std::string& name : monomial) {
      if (is_value_atom(name)) return true;
    }
  }
  return false;
}

DimExpr DimExpr::from_dim(const Dim& dim) {
  if (dim.is_fixed()) return DimExpr(dim.value());
  if (!dim.is_symbol()) return unknown();
  NameTable& table = name_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.expressions.find(dim.symbol_name());
  if (it != table.expressions.end()) return it->second;
  return atom(dim.symbol_name());
}

bool DimExpr::monomial_less(const Monomial& a, const Monomial& b) {
  if (a.size() != b.size()) return a.size() > b.size();  // constant last
  return a < b;
}

DimExpr DimExpr::from_terms(Terms terms) {
  DimExpr out(0);
  for (auto& [monomial, coefficient] : terms) {
    if (coefficient == 0) continue;
    if (monomial.size() > kMaxDegree) return make_unknown();
    out.terms_.emplace(monomial, coefficient);
  }
  if (out.terms_.size() > kMaxTerms) return make_unknown();
  return out;
}

std::optional<int64_t> DimExpr::constant() const {
  if (unknown_) return std::nullopt;
  if (terms_.empty()) return int64_t{0};
  if (terms_.size() == 1 && terms_.begin()->first.empty()) {
    return terms_.begin()->second;
  }
  return std::nullopt;
}

Dim DimExpr::to_dim() const {
  if (unknown_ || uses_value()) return Dim::unknown();
  if (std::optional<int64_t> value = constant()) {
    return *value >= 0 ? Dim(*value) : Dim::unknown();
  }
  if (terms_.size() == 1 && terms_.begin()->first.size() == 1 &&
      terms_.begin()->second == 1) {
    return Dim::symbol(terms_.begin()->first[0]);
  }
  std::string name = to_string();
  NameTable& table = name_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.expressions.emplace(name, *this);
  return Dim::symbol(std::move(name));
}

std::string DimExpr::to_string() const {
  if (unknown_) return "?";
  if (terms_.empty()) return "0";
  std::string out;
  for (const auto& [monomial, coefficient] : terms_) {
    std::string term;
    for (const std::string& name : monomial) {
      if (!term.empty()) term += "*";
      term += render_atom(name);
    }
    if (term.empty()) {
      term = std::to_string(coefficient);
    } else if (coefficient == -1) {
      term = "-" + term;
    } else if (coefficient != 1) {
      term = std::to_string(coefficient) + "*" + term;
    }
    if (!out.empty() && term[0] != '-') out += "+";
    out += term;
  }
  return out;
}

bool DimExpr::is_nonnegative() const {
  if (unknown_) return false;
  for (const auto& [monomial, coefficient] : terms_) {
    if (coefficient < 0) return false;
  }
  return !uses_value();
}

std::vector<std::pair<std::vector<std::string>, int64_t>> DimExpr::terms()
    const {
  if (unknown_) return {};
  return {terms_.begin(), terms_.end()};
}

std::vector<std::string> DimExpr::atoms() const {
  std::vector<std::string> out;
  for (const auto& [monomial, coefficient] : terms_) {
    out.insert(out.end(), monomial.begin(), monomial.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<int64_t> DimExpr::evaluate(
    const std::map<std::string, int64_t>& bindings) const {
  if (unknown_) return std::nullopt;
  int64_t sum = 0;
  for (const auto& [monomial, coefficient] : terms_) {
    int64_t term = coefficient;
    for (const std::string& name : monomial) {
      auto it = bindings.find(name);
      if (it == bindings.end() || !checked_mul(term, it->second, term)) {
        return std::nullopt;
      }
    }
    if (!checked_add(sum, term, sum)) return std::nullopt;
  }
  return sum;
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  if (a.unknown_ || b.unknown_) return DimExpr::unknown();
  DimExpr::Terms terms = a.terms_;
  for (const auto& [monomial, coefficient] : b.terms_) {
    int64_t& into = terms[monomial];
    if (!checked_add(into, coefficient, into)) return DimExpr::unknown();
  }
  return DimExpr::from_terms(std::move(terms));
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  return a + b * DimExpr(-1);
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  if (a.unknown_ || b.unknown_) return DimExpr::unknown();
  DimExpr::Terms terms;
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      DimExpr::Monomial monomial = ma;
      monomial.insert(monomial.end(), mb.begin(), mb.end());
      if (monomial.size() > kMaxDegree) return DimExpr::unknown();
      std::sort(monomial.begin(), monomial.end());
      int64_t product = 0;
      if (!checked_mul(ca, cb, product)) return DimExpr::unknown();
      int64_t& into = terms[monomial];
      if (!checked_add(into, product, into)) return DimExpr::unknown();
    }
  }
  return DimExpr::from_terms(std::move(terms));
}

DimExpr exact_div(const DimExpr& a, const DimExpr& b) {
  if (a.unknown_ || b.unknown_ || b.terms_.empty()) return DimExpr::unknown();
  const auto& [lead_b, coef_b] = *b.terms_.begin();
  DimExpr quotient(0);
  DimExpr rest = a;
  // Long division by leading terms: each step must divide exactly.
  for (int step = 0; step < kMaxDivisionSteps; ++step) {
    if (rest.unknown_) return DimExpr::unknown();
    if (rest.terms_.empty()) return quotient;
    const auto& [lead_r, coef_r] = *rest.terms_.begin();
    if (coef_r % coef_b != 0) return DimExpr::unknown();
    DimExpr::Monomial left;
    if (!std::includes(lead_r.begin(), lead_r.end(), lead_b.begin(),
                       lead_b.end())) {
      return DimExpr::unknown();
    }
    std::set_difference(lead_r.begin(), lead_r.end(), lead_b.begin(),
                        lead_b.end(), std::back_inserter(left));
    DimExpr term(0);
    term.terms_[left] = coef_r / coef_b;
    quotient = quotient + term;
    rest = rest - term * b;
  }
  return DimExpr::unknown();
}

DimExpr floor_div(const DimExpr& a, const DimExpr& b) {
  DimExpr exact = exact_div(a, b);
  if (!exact.is_unknown()) return exact;
  std::optional<int64_t> x = a.constant();
  std::optional<int64_t> y = b.constant();
  if (x && y && *x >= 0 && *y > 0) return DimExpr(*x / *y);
  return DimExpr::unknown();
}

DimExpr max(const DimExpr& a, const DimExpr& b) {
  std::optional<int64_t> difference = (a - b).constant();
  if (!difference) return DimExpr::unknown();
  return *difference >= 0 ? a : b;
}

DimExpr min(const DimExpr& a, const DimExpr& b) {
  std::optional<int64_t> difference = (a - b).constant();
  if (!difference) return DimExpr::unknown();
  return *difference <= 0 ? a : b;
}

Dim dim_add(const Dim& a, const Dim& b) {
  return (DimExpr::from_dim(a) + DimExpr::from_dim(b)).to_dim();
}
Dim dim_sub(const Dim& a, const Dim& b) {
  return (DimExpr::from_dim(a) - DimExpr::from_dim(b)).to_dim();
}
Dim dim_mul(const Dim& a, const Dim& b) {
  return (DimExpr::from_dim(a) * DimExpr::from_dim(b)).to_dim();
}
Dim dim_exact_div(const Dim& a, const Dim& b) {
  return exact_div(DimExpr::from_dim(a), DimExpr::from_dim(b)).to_dim();
}

DimExpr dims_product(const std::vector<Dim>& dims) {
  DimExpr product(1);
  for (const Dim& dim : dims) product = product * DimExpr::from_dim(dim);
  return product;
}

bool is_derived_dim(const Dim& dim) {
  if (!dim.is_symbol()) return false;
  NameTable& table = name_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.expressions.count(dim.symbol_name()) > 0;
}

std::vector<std::string> dim_atoms(const Dim& dim) {
  if (!dim.is_symbol()) return {};
  return DimExpr::from_dim(dim).atoms();
}

}  // namespace seqrt
