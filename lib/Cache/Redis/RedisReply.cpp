//===- RedisReply.cpp - Redis replies, read within bounds -----------------===//
//
// Part of gridjit. See RedisReply.h. The parser reads from the start of
// what has arrived each time (the client calls it again only once the
// bytes it said were needed are there), so it keeps no state between
// calls.
//
//===----------------------------------------------------------------------===//

#include "RedisReply.h"

#include <algorithm>
#include <cstdio>

using namespace gridjit;
using namespace gridjit::redis;

namespace {

class Parser {
public:
  Parser(std::string_view In, const ReplyLimits &L) : In(In), L(L) {}

  ParseStatus parse(Reply &Out, size_t &Used, std::string &WhyOut) {
    ParseStatus S = one(Out, 0);
    if (S == ParseStatus::Complete)
      Used = Pos;
    else if (S == ParseStatus::Incomplete)
      Used = Need;
    else
      WhyOut = std::move(Why);
    return S;
  }

private:
  std::string_view In;
  const ReplyLimits &L;
  size_t Pos = 0;  ///< bytes of the reply read so far
  size_t Need = 0; ///< when incomplete: the fewest bytes the reply needs
  std::string Why;

  ParseStatus bad(std::string W) {
    Why = std::move(W);
    return ParseStatus::Bad;
  }
  ParseStatus incomplete(size_t N) {
    Need = N;
    return ParseStatus::Incomplete;
  }
  static std::string num(uint64_t N) { return std::to_string(N); }

  /// The line at Pos, without its CRLF; Pos moves past it.
  ParseStatus line(std::string_view &Line) {
    size_t End = In.find("\r\n", Pos);
    size_t Have = (End == std::string_view::npos ? In.size() : End + 2) - Pos;
    // A line and what came before it count towards the reply's bound.
    if (Have > L.MaxLineBytes || (End == std::string_view::npos && Have >= L.MaxLineBytes))
      return bad("a line of more than " + num(L.MaxLineBytes) + " bytes");
    if (Pos + Have > L.MaxReplyBytes)
      return bad("a reply of more than " + num(L.MaxReplyBytes) + " bytes");
    if (End == std::string_view::npos)
      return incomplete(In.size() + 1);
    Line = In.substr(Pos, End - Pos);
    Pos = End + 2;
    return ParseStatus::Complete;
  }

  /// A decimal integer, optionally negative, with no other character.
  static bool toInt(std::string_view S, long long &V) {
    bool Neg = !S.empty() && S[0] == '-';
    if (Neg)
      S.remove_prefix(1);
    if (S.empty() || S.size() > 19)
      return false;
    unsigned long long U = 0;
    for (char C : S) {
      if (C < '0' || C > '9')
        return false;
      U = U * 10 + unsigned(C - '0');
    }
    if (U > (unsigned long long)INT64_MAX + Neg)
      return false;
    V = Neg ? static_cast<long long>(0 - U) : static_cast<long long>(U);
    return true;
  }

  /// The header line after the type byte, as an integer (a length, a
  /// count, or an integer reply).
  ParseStatus header(const char *What, long long &V) {
    std::string_view Line;
    if (ParseStatus S = line(Line); S != ParseStatus::Complete)
      return S;
    if (!toInt(Line, V))
      return bad(std::string(What) + " that is not a number: '" + std::string(Line.substr(0, 32)) +
                 "'");
    return ParseStatus::Complete;
  }

  ParseStatus one(Reply &R, unsigned Depth) {
    if (Pos >= In.size())
      return incomplete(Pos + 1);
    char Type = In[Pos++];
    switch (Type) {
    case '+':
    case '-': {
      std::string_view Line;
      if (ParseStatus S = line(Line); S != ParseStatus::Complete)
        return S;
      R.Type = Type == '+' ? Reply::Status : Reply::Error;
      R.Str.assign(Line);
      return ParseStatus::Complete;
    }
    case ':': {
      R.Type = Reply::Integer;
      return header("an integer", R.Int);
    }
    case '$': {
      long long Len;
      if (ParseStatus S = header("a bulk string length", Len); S != ParseStatus::Complete)
        return S;
      if (Len == -1) {
        R.Type = Reply::Nil;
        return ParseStatus::Complete;
      }
      if (Len < 0)
        return bad("a bulk string of negative length " + std::to_string(Len));
      // Checked before a byte of it is buffered.
      uint64_t End = uint64_t(Pos) + uint64_t(Len) + 2;
      if (End > L.MaxReplyBytes)
        return bad("a bulk string of " + num(uint64_t(Len)) + " bytes, over the limit of " +
                   num(L.MaxReplyBytes) + " bytes for a reply");
      if (In.size() < End)
        return incomplete(size_t(End));
      if (In[End - 2] != '\r' || In[End - 1] != '\n')
        return bad("a bulk string not followed by CRLF");
      R.Type = Reply::String;
      R.Str.assign(In.substr(Pos, size_t(Len)));
      Pos = size_t(End);
      return ParseStatus::Complete;
    }
    case '*': {
      long long Count;
      if (ParseStatus S = header("an array count", Count); S != ParseStatus::Complete)
        return S;
      if (Count == -1) {
        R.Type = Reply::Nil;
        return ParseStatus::Complete;
      }
      if (Count < 0)
        return bad("an array of negative count " + std::to_string(Count));
      // Checked before anything is allocated for it.
      if (uint64_t(Count) > L.MaxElements)
        return bad("an array of " + num(uint64_t(Count)) + " elements, over the limit of " +
                   num(L.MaxElements));
      if (Depth + 1 > L.MaxDepth)
        return bad("arrays nested more than " + num(L.MaxDepth) + " deep");
      R.Type = Reply::Array;
      R.Elements.resize(size_t(Count));
      for (Reply &E : R.Elements)
        if (ParseStatus S = one(E, Depth + 1); S != ParseStatus::Complete)
          return S;
      return ParseStatus::Complete;
    }
    default: {
      char Hex[8];
      std::snprintf(Hex, sizeof(Hex), "0x%02x", unsigned(uint8_t(Type)));
      return bad(std::string("not a reply: type byte ") + Hex);
    }
    }
  }
};

} // namespace

ParseStatus redis::parseReply(std::string_view In, const ReplyLimits &L, Reply &Out, size_t &Used,
                              std::string &Why) {
  Out = Reply();
  return Parser(In, L).parse(Out, Used, Why);
}

StoredValue redis::interpretGetReply(const Reply &R) {
  StoredValue V;
  if (R.Type == Reply::Integer) {
    V.Kind = StoredValue::Oversize;
    V.Size = uint64_t(std::max<long long>(R.Int, 0));
  } else if (R.Type == Reply::String) {
    V.Kind = StoredValue::Found;
    V.Bytes = R.Str;
  }
  return V;
}
