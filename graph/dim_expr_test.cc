#include "graph/dim_expr.h"

#include <gtest/gtest.h>

namespace seqrt {
namespace {

DimExpr a(const char* name) { return DimExpr::atom(name); }

TEST(DimExpr, CanonicalTextSortsTerms) {
  EXPECT_EQ((a("seq") + a("past")).to_string(), "past+seq");
  EXPECT_EQ((a("past") + a("seq")), (a("seq") + a("past")));
  EXPECT_EQ((a("seq") * DimExpr(2) + DimExpr(1)).to_string(), "2*seq+1");
  EXPECT_EQ((DimExpr(1) + a("seq") + a("seq")).to_string(), "2*seq+1");
  EXPECT_EQ((a("seq") * a("batch")).to_string(), "batch*seq");
  EXPECT_EQ((a("seq") - a("past")).to_string(), "-past+seq");
  EXPECT_EQ((a("seq") * a("seq") + a("seq")).to_string(), "seq*seq+seq");
  EXPECT_EQ(DimExpr::unknown().to_string(), "?");
}

TEST(DimExpr, CancelsToAtomsAndConstants) {
  DimExpr total = a("past") + a("seq");
  EXPECT_EQ(total - a("past"), a("seq"));
  EXPECT_EQ((total - a("past")).to_dim(), Dim::symbol("seq"));
  EXPECT_EQ((a("seq") + DimExpr(3) - a("seq")).constant(), 3);
  EXPECT_EQ((a("x") - a("x")).to_dim(), Dim(0));
}

TEST(DimExpr, ExactDivision) {
  DimExpr batch_seq = a("batch") * a("seq");
  EXPECT_EQ(exact_div(batch_seq, a("seq")), a("batch"));
  EXPECT_EQ(exact_div(batch_seq * DimExpr(64), DimExpr(64) * a("seq")),
            a("batch"));
  DimExpr total = a("past") + a("seq");
  EXPECT_EQ(exact_div(total * a("batch") * DimExpr(4), total), a("batch") * 4);
  EXPECT_EQ(exact_div(DimExpr(12), DimExpr(4)).constant(), 3);
  // Does not reduce.
  EXPECT_TRUE(exact_div(a("seq"), a("batch")).is_unknown());
  EXPECT_TRUE(exact_div(a("seq") * DimExpr(3), DimExpr(2)).is_unknown());
  EXPECT_TRUE(exact_div(total, a("past")).is_unknown());
  EXPECT_TRUE(exact_div(DimExpr(7), DimExpr(0)).is_unknown());
  EXPECT_TRUE(exact_div(a("seq"), DimExpr::unknown()).is_unknown());
}

TEST(DimExpr, FloorDivMaxMin) {
  EXPECT_EQ(floor_div(DimExpr(7), DimExpr(2)).constant(), 3);
  EXPECT_TRUE(floor_div(a("seq"), DimExpr(2)).is_unknown());
  EXPECT_EQ(max(a("seq"), a("seq") + DimExpr(1)), a("seq") + DimExpr(1));
  EXPECT_EQ(min(a("seq"), a("seq") + DimExpr(1)), a("seq"));
  EXPECT_EQ(max(DimExpr(3), DimExpr(5)).constant(), 5);
  EXPECT_TRUE(max(a("seq"), a("past")).is_unknown());
}

TEST(DimExpr, NonNegativeWhenEveryCoefficientIs) {
  EXPECT_TRUE(
      (a("seq") + a("past") * DimExpr(2) + DimExpr(1)).is_nonnegative());
  EXPECT_TRUE(DimExpr(0).is_nonnegative());
  EXPECT_FALSE((a("seq") - DimExpr(1)).is_nonnegative());
  EXPECT_FALSE(DimExpr(-1).is_nonnegative());
  EXPECT_FALSE(DimExpr::unknown().is_nonnegative());
}

TEST(DimExpr, UnknownAndOverflowPropagate) {
  EXPECT_TRUE((a("seq") + DimExpr::unknown()).is_unknown());
  EXPECT_TRUE((DimExpr::unknown() * DimExpr(0)).is_unknown());
  DimExpr huge(int64_t{1} << 62);
  EXPECT_TRUE((huge * DimExpr(4)).is_unknown());
  EXPECT_TRUE((huge + huge).is_unknown());
  // Degree past the limit.
  DimExpr x = a("x");
  EXPECT_TRUE((x * x * x * x * x).is_unknown());
}

TEST(DimExpr, DimsRoundTripThroughDerivedNames) {
  Dim total = dim_add(Dim::symbol("past"), Dim::symbol("seq"));
  EXPECT_EQ(total, Dim::symbol("past+seq"));
  EXPECT_TRUE(is_derived_dim(total));
  EXPECT_FALSE(is_derived_dim(Dim::symbol("past")));
  EXPECT_EQ(dim_sub(total, Dim::symbol("past")), Dim::symbol("seq"));
  EXPECT_EQ(dim_add(Dim(2), Dim(3)), Dim(5));
  EXPECT_EQ(dim_sub(Dim(2), Dim(3)), Dim::unknown());  // negative
  EXPECT_EQ(dim_mul(Dim::symbol("seq"), Dim()), Dim::unknown());
  EXPECT_EQ(dim_exact_div(dim_mul(Dim::symbol("batch"), Dim::symbol("seq")),
                          Dim::symbol("seq")),
            Dim::symbol("batch"));
  std::vector<std::string> atoms{"past", "seq"};
  EXPECT_EQ(dim_atoms(total), atoms);
  EXPECT_EQ(dim_atoms(Dim::symbol("seq")), std::vector<std::string>{"seq"});
  EXPECT_TRUE(dim_atoms(Dim(3)).empty());
  EXPECT_EQ(DimExpr::from_dim(total).evaluate({{"past", 5}, {"seq", 2}}), 7);
  EXPECT_EQ(DimExpr::from_dim(total).evaluate({{"past", 5}}), std::nullopt);
}

TEST(DimExpr, UserNamesAreAtoms) {
  // Never parsed: a name that looks like arithmetic is one atom.
  Dim user = Dim::symbol("past_sequence_length + 1");
  EXPECT_FALSE(is_derived_dim(user));
  DimExpr expr = DimExpr::from_dim(user);
  EXPECT_EQ(expr.atoms(), std::vector<std::string>{"past_sequence_length + 1"});
  // Bracketed inside expressions, so it never reads as two atoms.
  EXPECT_EQ((expr + a("seq")).to_string(), "[past_sequence_length + 1]+seq");
  EXPECT_NE((expr + a("seq")).to_string(),
            (a("past_sequence_length") + DimExpr(1) + a("seq")).to_string());
  EXPECT_EQ((a("a]b") + a("c")).to_string(), "[a\\]b]+c");
  EXPECT_EQ(dim_sub(dim_add(user, Dim::symbol("seq")), Dim::symbol("seq")),
            user);
}

}  // namespace
}  // namespace seqrt
