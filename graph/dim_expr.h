// Symbolic integer arithmetic on dims, for shape inference of exports with
// symbolic input dims: Concat of (past) and (seq) keys gives a dim that must
// compare equal to the (past+seq) of Range's length, and Reshape's -1 over
// (batch,seq) -> (-1,seq) must give batch.
//
// A DimExpr is a polynomial with integer coefficients over atom symbols
// (input dim names such as "batch", "seq"), or unknown. Its canonical text
// sorts the terms (by degree, then atom names; the constant last), so equal
// expressions render equally: "past+seq", "2*seq+1", "batch*seq".
//
// Naming choice: a Dim stays a plain symbol name (graph/shape.h). A name is
// read back as an expression only if this process produced it through
// to_dim() (a table of produced names); every other name is an atom, so user
// names such as "past_sequence_length + 1" are never parsed. Atoms that are
// not plain identifiers are bracketed in the canonical text ("[a b]+seq"),
// so two different expressions never render the same. The one ambiguity
// left: an input dim literally named like an expression this process
// produced (an input dim called "past+seq" next to atoms past and seq) is
// read as that expression, which is what such a name means anyway.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/shape.h"

namespace seqrt {

class DimExpr {
 public:
  DimExpr() = default;     // unknown
  DimExpr(int64_t value);  // NOLINT: a constant, implicit by design
  static DimExpr atom(std::string name);
  // The run-time value of an integer scalar graph input, as an atom that
  // never becomes a dim: an expression using it is unknown as a dim
  // (to_dim), while one where it cancels is not — Range(n, n+seq) has seq
  // elements whatever the input n holds. Its sign is not known.
  static DimExpr value_atom(const std::string& input_name);
  // Whether some atom is a value atom.
  bool uses_value() const;
  static DimExpr unknown() { return DimExpr(); }
  // A fixed dim is a constant, a symbol its expression (derived names) or
  // an atom, an unknown dim unknown.
  static DimExpr from_dim(const Dim& dim);

  bool is_unknown() const { return unknown_; }
  // The value when the expression is a constant.
  std::optional<int64_t> constant() const;
  // Fixed (when a non-negative constant), symbol (canonical name, recorded
  // in the table of produced names) or unknown (negative or unknown).
  Dim to_dim() const;
  std::string to_string() const;  // canonical text; "?" when unknown
  // True when every coefficient is positive: atoms are dims, never
  // negative, so such an expression is >= 0 (unknown: false).
  bool is_nonnegative() const;
  // The atom names it uses, sorted.
  std::vector<std::string> atoms() const;
  // Its terms: each monomial's atoms (sorted, repeated for powers; none for
  // the constant term) with the coefficient. Empty for unknown and for 0.
  std::vector<std::pair<std::vector<std::string>, int64_t>> terms() const;
  // The value under `bindings` (atom name -> size); nullopt when an atom is
  // unbound, the expression is unknown or the arithmetic overflows.
  std::optional<int64_t> evaluate(
      const std::map<std::string, int64_t>& bindings) const;

  // Unknown when either side is unknown, on overflow, or when the result
  // grows past a small size (the algebra is for shapes, not programs).
  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  // Exact division: unknown unless a = q * b for a polynomial q found by
  // dividing the leading terms (a constant divisor must divide every
  // coefficient).
  friend DimExpr exact_div(const DimExpr& a, const DimExpr& b);
  // Floor division as ONNX integer Div on non-negative values: exact when
  // it divides, the constant result for constants, otherwise unknown.
  friend DimExpr floor_div(const DimExpr& a, const DimExpr& b);
  // Max/Min when decidable: equal sides, or a constant difference.
  friend DimExpr max(const DimExpr& a, const DimExpr& b);
  friend DimExpr min(const DimExpr& a, const DimExpr& b);

  bool operator==(const DimExpr& other) const {
    return unknown_ == other.unknown_ && terms_ == other.terms_;
  }
  bool operator!=(const DimExpr& other) const { return !(*this == other); }

 private:
  // Monomial: sorted atom names (repeated for powers); the constant term
  // has the empty monomial. Coefficients are never zero.
  using Monomial = std::vector<std::string>;
  static bool monomial_less(const Monomial& a, const Monomial& b);
  struct Less {
    bool operator()(const Monomial& a, const Monomial& b) const {
      return monomial_less(a, b);
    }
  };
  using Terms = std::map<Monomial, int64_t, Less>;

  static DimExpr from_terms(Terms terms);  // drops zeros, checks size
  static DimExpr make_unknown() { return DimExpr(); }

  bool unknown_ = true;
  Terms terms_;
};

// Arithmetic on dims through DimExpr: Dim results are fixed, an atom, a
// derived name, or unknown.
Dim dim_add(const Dim& a, const Dim& b);
Dim dim_sub(const Dim& a, const Dim& b);
Dim dim_mul(const Dim& a, const Dim& b);
Dim dim_exact_div(const Dim& a, const Dim& b);
// The product of dims (1 for none).
DimExpr dims_product(const std::vector<Dim>& dims);

// Whether `dim` is a name produced by DimExpr::to_dim (not an input atom).
bool is_derived_dim(const Dim& dim);
// The atom names a dim depends on: itself for an atom, the expression's
// atoms for a derived name, none for a fixed or unknown dim.
std::vector<std::string> dim_atoms(const Dim& dim);

}  // namespace seqrt
