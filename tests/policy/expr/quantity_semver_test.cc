#include <gtest/gtest.h>

#include "policy/expr/quantity.h"
#include "policy/expr/semver.h"

namespace fabricwatch::policy::expr {
namespace {

int64_t qi(const char* s) {
  auto q = parseQuantity(s);
  EXPECT_TRUE(std::holds_alternative<int64_t>(q)) << s;
  return std::holds_alternative<int64_t>(q) ? std::get<int64_t>(q) : -999;
}
double qd(const char* s) {
  auto q = parseQuantity(s);
  EXPECT_TRUE(std::holds_alternative<double>(q)) << s;
  return std::holds_alternative<double>(q) ? std::get<double>(q) : -999;
}
std::string qerr(const char* s) {
  auto q = parseQuantity(s);
  return std::holds_alternative<std::string>(q) ? std::get<std::string>(q) : "no error";
}

TEST(QuantityTest, BinarySuffixes) {
  EXPECT_EQ(qi("1Ki"), 1024);
  EXPECT_EQ(qi("5Gi"), int64_t{5} << 30);
  EXPECT_EQ(qi("2Mi"), 2 * 1024 * 1024);
  EXPECT_EQ(qi("1Ti"), int64_t{1} << 40);
  EXPECT_EQ(qi("1Pi"), int64_t{1} << 50);
  EXPECT_EQ(qi("7Ei"), int64_t{7} << 60);
  EXPECT_EQ(qi("1.5Gi"), int64_t{3} << 29);
  EXPECT_EQ(qerr("8Ei"), "invalid quantity '8Ei': out of range");
}

TEST(QuantityTest, DecimalSuffixesAndExponents) {
  EXPECT_EQ(qi("0"), 0);
  EXPECT_EQ(qi("42"), 42);
  EXPECT_EQ(qi("+42"), 42);
  EXPECT_EQ(qi("-42"), -42);
  EXPECT_EQ(qi("1k"), 1000);
  EXPECT_EQ(qi("2M"), 2000000);
  EXPECT_EQ(qi("3G"), 3000000000);
  EXPECT_EQ(qi("1T"), 1000000000000);
  EXPECT_EQ(qi("1P"), 1000000000000000);
  EXPECT_EQ(qi("9E"), 9000000000000000000);
  EXPECT_EQ(qi("1e3"), 1000);
  EXPECT_EQ(qi("1E3"), 1000);
  EXPECT_EQ(qi("1.5e3"), 1500);
  EXPECT_EQ(qi("120e-1"), 12);
}

TEST(QuantityTest, FractionsAreDoubles) {
  EXPECT_DOUBLE_EQ(qd("500m"), 0.5);
  EXPECT_EQ(qi("2000m"), 2);  // whole numbers stay ints
  EXPECT_DOUBLE_EQ(qd("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(qd(".5"), 0.5);
  EXPECT_DOUBLE_EQ(qd("100u"), 0.0001);
  EXPECT_DOUBLE_EQ(qd("3n"), 3e-9);
  EXPECT_DOUBLE_EQ(qd("1e-3"), 0.001);
  EXPECT_DOUBLE_EQ(qd("-250m"), -0.25);
}

TEST(QuantityTest, Errors) {
  EXPECT_EQ(qerr(""), "invalid quantity '': expected a number");
  EXPECT_EQ(qerr("Gi"), "invalid quantity 'Gi': expected a number");
  EXPECT_EQ(qerr("5Gb"), "invalid quantity '5Gb': unknown suffix");
  EXPECT_EQ(qerr("5 Gi"), "invalid quantity '5 Gi': unknown suffix");
  EXPECT_EQ(qerr("5Gi "), "invalid quantity '5Gi ': unknown suffix");
  EXPECT_EQ(qerr("1e"), "invalid quantity '1e': unknown suffix");
  EXPECT_EQ(qerr("1e+"), "invalid quantity '1e+': expected an exponent");
  EXPECT_EQ(qerr("1e3x"), "invalid quantity '1e3x': bad exponent");
  EXPECT_EQ(qerr("1.2.3"), "invalid quantity '1.2.3': unknown suffix");
  EXPECT_EQ(qerr("99999999999999999999"), "invalid quantity '99999999999999999999': out of range");
  EXPECT_EQ(qerr("1e999"), "invalid quantity '1e999': exponent out of range");
  EXPECT_EQ(qerr("1234567890123456789012345678901"),
            "invalid quantity '1234567890123456789012345678901': too many digits");
}

Semver sv(const char* s) {
  auto v = parseSemver(s);
  EXPECT_TRUE(v.has_value()) << s;
  return v.value_or(Semver{});
}

TEST(SemverTest, ParsesLeadingNumbersAndRest) {
  Semver v = sv("2.21.5+cuda12.4");
  EXPECT_EQ(v.numbers, (std::vector<int64_t>{2, 21, 5}));
  EXPECT_EQ(v.rest, "+cuda12.4");
  EXPECT_EQ(v.text, "2.21.5+cuda12.4");
  EXPECT_EQ(sv("1.22.0amzn1.0").rest, "amzn1.0");
  EXPECT_EQ(sv("v1.2").numbers, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(sv("28.39.1002").numbers, (std::vector<int64_t>{28, 39, 1002}));
  EXPECT_EQ(sv("2.").rest, ".");
  EXPECT_FALSE(parseSemver("").has_value());
  EXPECT_FALSE(parseSemver("abc").has_value());
  EXPECT_FALSE(parseSemver(".1").has_value());
  EXPECT_FALSE(parseSemver("99999999999999999999").has_value());
}

TEST(SemverTest, Compares) {
  EXPECT_EQ(compareSemver(sv("2.34"), sv("2.34.0")), 0);
  EXPECT_LT(compareSemver(sv("2.34"), sv("2.34.1")), 0);
  EXPECT_LT(compareSemver(sv("2.9"), sv("2.10")), 0);
  EXPECT_GT(compareSemver(sv("28.39.1002"), sv("28.39.999")), 0);
  EXPECT_GT(compareSemver(sv("2.21.5+cuda12.4"), sv("2.21.5")), 0);
  EXPECT_LT(compareSemver(sv("2.21.5+cuda12.4"), sv("2.21.6")), 0);
  EXPECT_LT(compareSemver(sv("1.22.0amzn1.0"), sv("1.22.0amzn2.0")), 0);
  EXPECT_EQ(compareSemver(sv("v1.2"), sv("1.2")), 0);
}

}  // namespace
}  // namespace fabricwatch::policy::expr
