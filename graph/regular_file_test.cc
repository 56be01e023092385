#include "graph/regular_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace seqrt {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/seqrt_regular_file_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::remove((dir_ + "/file.bin").c_str());
    std::remove((dir_ + "/fifo").c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(RegularFileTest, OpensARegularFileWithItsSize) {
  std::ofstream(dir_ + "/file.bin") << "twelve bytes";
  Result<RegularFile> file = RegularFile::open(dir_ + "/file.bin");
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->size(), 12u);
  char head[6] = {};
  ASSERT_EQ(read(file->fd(), head, 6), 6);
  EXPECT_EQ(std::string(head, 6), "twelve");
  std::FILE* stream = file->release_to_stream();
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(file->fd(), -1);
  std::fclose(stream);
}

// Opening a FIFO with no writer would block forever; it must be refused at
// once (the test would hang otherwise), as must directories and devices.
TEST_F(RegularFileTest, RefusesFifosDirectoriesAndDevicesWithoutBlocking) {
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  for (const std::string& path :
       {dir_ + "/fifo", dir_, std::string("/dev/zero")}) {
    Result<RegularFile> file = RegularFile::open(path);
    ASSERT_FALSE(file.is_ok()) << path;
    EXPECT_EQ(file.status().code(), StatusCode::kIoError);
    EXPECT_NE(
        file.status().message().find("'" + path + "' is not a regular file"),
        std::string::npos)
        << file.status().message();
  }
}

TEST_F(RegularFileTest, AMissingFileIsNotFound) {
  Result<RegularFile> file = RegularFile::open(dir_ + "/missing");
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("cannot open '" + dir_ + "/missing'"),
            std::string::npos);
}

}  // namespace
}  // namespace seqrt
