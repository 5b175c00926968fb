//===- RemoteCacheConfig.cpp - What a remote cache is told to be ----------===//
//
// Part of gridjit. See RemoteCacheConfig.h: the URL's grammar, the secret
// file, and the environment's defaults.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/RemoteCacheConfig.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Support/Errors.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gridjit;

namespace {

llvm::Error urlError(std::string_view URL, const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "remote cache URL '" + llvm::Twine(URL) + "': " + What);
}

bool parseUnsigned(std::string_view S, unsigned Max, unsigned &Out) {
  if (S.empty() || S.size() > 10)
    return false;
  uint64_t V = 0;
  for (char C : S) {
    if (C < '0' || C > '9')
      return false;
    V = V * 10 + unsigned(C - '0');
  }
  if (V > Max)
    return false;
  Out = unsigned(V);
  return true;
}

/// `[[user]:password@]`: everything up to the last '@' (a password may
/// hold '@'), taken off the front of \p Rest.
llvm::Error parseCredentials(std::string_view URL, std::string_view &Rest, RemoteCacheURL &R) {
  size_t At = Rest.rfind('@');
  if (At == std::string_view::npos)
    return llvm::Error::success();
  std::string_view Cred = Rest.substr(0, At);
  Rest = Rest.substr(At + 1);
  size_t Colon = Cred.find(':');
  if (Colon == std::string_view::npos) {
    R.Password = std::string(Cred);
  } else {
    R.User = std::string(Cred.substr(0, Colon));
    R.Password = std::string(Cred.substr(Colon + 1));
  }
  if (R.Password.empty())
    return urlError(URL, "empty password before '@'");
  return llvm::Error::success();
}

/// `/path[?db=N]` of a redis+unix URL.
llvm::Error parseUnixPath(std::string_view URL, std::string_view Rest, RemoteCacheURL &R) {
  std::string_view Path = Rest;
  if (size_t Q = Rest.find('?'); Q != std::string_view::npos) {
    Path = Rest.substr(0, Q);
    std::string_view Query = Rest.substr(Q + 1);
    if (!Query.starts_with("db=") || !parseUnsigned(Query.substr(3), 1u << 20, R.Database))
      return urlError(URL, "the only query is ?db=N (N a database number), not '?" +
                               llvm::Twine(Query) + "'");
  }
  if (Path.empty() || Path[0] != '/')
    return urlError(URL, "the socket path must be absolute (redis+unix:///path/to/socket)");
  R.SocketPath = std::string(Path);
  return llvm::Error::success();
}

/// `host[:port][/db]` of a redis URL (an IPv6 host in brackets).
llvm::Error parseHostPort(std::string_view URL, std::string_view Rest, RemoteCacheURL &R) {
  std::string_view HostPort = Rest;
  if (size_t Slash = Rest.find('/'); Slash != std::string_view::npos) {
    HostPort = Rest.substr(0, Slash);
    std::string_view DB = Rest.substr(Slash + 1);
    if (!DB.empty() && !parseUnsigned(DB, 1u << 20, R.Database))
      return urlError(URL, "database '" + llvm::Twine(DB) + "' is not a number");
  }
  std::string_view PortText;
  bool HasPort = false;
  if (HostPort.starts_with("[")) {
    size_t Close = HostPort.find(']');
    if (Close == std::string_view::npos)
      return urlError(URL, "an IPv6 host needs a closing ']'");
    R.Host = std::string(HostPort.substr(1, Close - 1));
    std::string_view After = HostPort.substr(Close + 1);
    if (!After.empty() && After[0] != ':')
      return urlError(URL, "unexpected '" + llvm::Twine(After) + "' after the host");
    HasPort = !After.empty();
    PortText = HasPort ? After.substr(1) : After;
  } else {
    size_t Colon = HostPort.find(':');
    R.Host = std::string(HostPort.substr(0, Colon));
    HasPort = Colon != std::string_view::npos;
    PortText = HasPort ? HostPort.substr(Colon + 1) : std::string_view();
  }
  if (HasPort && PortText.empty())
    return urlError(URL, "empty port after ':'");
  if (R.Host.empty())
    return urlError(URL, "no host");
  if (HasPort && (!parseUnsigned(PortText, 65535, R.Port) || R.Port == 0))
    return urlError(URL, "port '" + llvm::Twine(PortText) + "' is not a number from 1 to 65535");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<RemoteCacheURL> gridjit::parseRemoteCacheURL(std::string_view URL) {
  RemoteCacheURL R;
  std::string_view Rest;
  if (URL.starts_with("redis://")) {
    Rest = URL.substr(8);
  } else if (URL.starts_with("redis+unix://")) {
    R.IsUnix = true;
    Rest = URL.substr(13);
  } else {
    return urlError(URL, "expected redis://[user:password@]host[:port][/db] or "
                         "redis+unix://[user:password@]/path");
  }
  if (llvm::Error E = parseCredentials(URL, Rest, R))
    return std::move(E);
  if (llvm::Error E = R.IsUnix ? parseUnixPath(URL, Rest, R) : parseHostPort(URL, Rest, R))
    return std::move(E);
  return R;
}

namespace {

/// "a FIFO", "a directory", ...: what the file \p St describes is.
const char *fileKind(const struct stat &St) {
  if (S_ISDIR(St.st_mode))
    return "a directory";
  if (S_ISFIFO(St.st_mode))
    return "a FIFO";
  if (S_ISCHR(St.st_mode))
    return "a character device";
  if (S_ISBLK(St.st_mode))
    return "a block device";
  if (S_ISSOCK(St.st_mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

llvm::Expected<std::string> gridjit::readSecretFile(const std::string &Path,
                                                    std::string_view What) {
  std::string Name = "the " + std::string(What) + " '" + Path + "'";
  auto TooLarge = [&](uint64_t Size) {
    return makeError(ErrorKind::InvalidArgument, Name + " holds " + llvm::Twine(Size) +
                                                     " bytes or more; a secret is at most " +
                                                     llvm::Twine(MaxSecretFileBytes));
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
  // below, as is every file that is not a regular one: /dev/zero would be
  // read forever). A link to a regular file is followed (mounted secrets
  // are often links).
  int FD = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (FD < 0)
    return makeError(ErrorKind::IO, "cannot read " + Name + ": " + std::strerror(errno));
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    int Error = errno;
    bool Stat = ::fstat(FD, &St) == 0;
    ::close(FD);
    if (!Stat)
      return makeError(ErrorKind::IO, "cannot read " + Name + ": " + std::strerror(Error));
    return makeError(ErrorKind::IO,
                     "cannot read " + Name + ": it is " + fileKind(St) + ", not a regular file");
  }
  if (uint64_t(St.st_size) > MaxSecretFileBytes) {
    ::close(FD);
    return TooLarge(uint64_t(St.st_size));
  }
  // One byte more than the bound: a file that grew meanwhile is refused,
  // never read further.
  std::string S(MaxSecretFileBytes + 1, '\0');
  size_t Got = 0;
  while (Got < S.size()) {
    ssize_t N = ::read(FD, S.data() + Got, S.size() - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      int Error = errno;
      ::close(FD);
      return makeError(ErrorKind::IO, "cannot read " + Name + ": " + std::strerror(Error));
    }
    if (N == 0)
      break;
    Got += size_t(N);
  }
  ::close(FD);
  if (Got > MaxSecretFileBytes)
    return TooLarge(Got);
  S.resize(Got);
  if (S.size() < MinSecretBytes)
    return makeError(ErrorKind::InvalidArgument, Name + " holds " + llvm::Twine(S.size()) +
                                                     " bytes; a secret needs at least " +
                                                     llvm::Twine(MinSecretBytes));
  return S;
}

llvm::Expected<std::string> gridjit::readRemoteCacheSecret(const std::string &Path) {
  return readSecretFile(Path, "remote cache secret file");
}

llvm::Expected<std::optional<RemoteCacheOptions>>
gridjit::resolveRemoteCacheOptions(RemoteCacheOptions Opts, const std::string &SecretFile) {
  if (Opts.URL.empty())
    Opts.URL = getEnv(EnvVar::GridjitRemoteCache).value_or("");
  if (Opts.URL.empty())
    return std::nullopt;
  if (getEnv(EnvVar::GridjitRemoteCacheReadOnly).value_or("") == "1")
    Opts.ReadOnly = true;
  if (Opts.Secret.empty()) {
    std::string File = SecretFile;
    if (File.empty())
      File = getEnv(EnvVar::GridjitRemoteCacheSecretFile).value_or("");
    if (!File.empty()) {
      auto Secret = readRemoteCacheSecret(File);
      if (!Secret)
        return Secret.takeError();
      Opts.Secret = std::move(*Secret);
    }
  }
  return Opts;
}
