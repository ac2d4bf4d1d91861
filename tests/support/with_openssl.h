#pragma once
// A fixture for suites that exercise what needs OpenSSL below the entry points that load it
// (the frame codec, a channel server or prober built by hand, BasicAuth): it loads OpenSSL as
// those entry points do (core/openssl.h). Tests of the entry points themselves do not use it.

#include <gtest/gtest.h>

#include "core/openssl.h"

namespace fabricwatch::testing {

class WithOpenSsl : public ::testing::Test {
 protected:
  WithOpenSsl() {
    if (auto st = core::openssl::require("the test"); !st) ADD_FAILURE() << st.message();
  }
};

}  // namespace fabricwatch::testing
