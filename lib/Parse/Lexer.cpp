//===- Lexer.cpp - KIR source text to tokens ------------------------------===//
//
// Part of gridjit. A hand-written lexer: one function per token family. It
// never relies on a NUL terminator (the buffer is a string_view that may
// contain NUL bytes) and every call consumes at least one character or
// returns Eof.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Parse/Lexer.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <iterator>
#include <string>

using namespace gridjit;

namespace {
bool isDigit(char C) { return C >= '0' && C <= '9'; }
bool isHexDigit(char C) { return isDigit(C) || (C >= 'a' && C <= 'f') || (C >= 'A' && C <= 'F'); }
bool isIdentStart(char C) { return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_'; }
bool isIdentChar(char C) { return isIdentStart(C) || isDigit(C); }
bool isSpace(char C) {
  return C == ' ' || C == '\t' || C == '\n' || C == '\r' || C == '\v' || C == '\f';
}

/// Quotes raw source bytes for a message: printable ASCII as is, anything
/// else as `\xNN`.
std::string escapeBytes(std::string_view Bytes) {
  static constexpr char Hex[] = "0123456789ABCDEF";
  std::string Out;
  for (char C : Bytes) {
    auto U = static_cast<unsigned char>(C);
    if (U >= 0x20 && U < 0x7f) {
      Out += C;
      continue;
    }
    Out += "\\x";
    Out += Hex[U >> 4];
    Out += Hex[U & 0xf];
  }
  return Out;
}
} // namespace

namespace {
struct TokenRow {
  TokenKind Kind;
  std::string_view Name;
};
constexpr TokenRow TokenNames[] = {
#define GRIDJIT_TOKEN(Id, Name) {TokenKind::Id, Name},
#define GRIDJIT_KEYWORD(Id, Spelling) {TokenKind::Kw##Id, "'" Spelling "'"},
#define GRIDJIT_PUNCT(Id, Spelling) {TokenKind::Id, "'" Spelling "'"},
#include "gridjit/Parse/TokenKinds.def"
};
constexpr bool namesInKindOrder() {
  for (unsigned I = 0; I < std::size(TokenNames); ++I)
    if (static_cast<unsigned>(TokenNames[I].Kind) != I)
      return false;
  return true;
}
static_assert(namesInKindOrder(), "TokenNames[i] must name TokenKind i");
} // namespace

std::string_view gridjit::tokenKindName(TokenKind K) {
  auto I = static_cast<unsigned>(K);
  return I < std::size(TokenNames) ? TokenNames[I].Name : "token";
}

SourceLoc Lexer::locAt(size_t Offset) const {
  return SourceLoc{Line, static_cast<unsigned>(Offset - LineStart + 1)};
}

Token Lexer::makeToken(TokenKind K, size_t Start) const {
  Token T;
  T.Kind = K;
  T.Text = Src.substr(Start, Pos - Start);
  T.Loc = locAt(Start);
  return T;
}

// Skips a `/* ... */` comment starting at Pos (which points at the '/').
// Returns false, after reporting it, when the input ends inside it.
bool Lexer::skipBlockComment() {
  SourceLoc Start = locAt(Pos);
  Pos += 2;
  while (!atEnd()) {
    if (peek() == '*' && peek(1) == '/') {
      Pos += 2;
      return true;
    }
    if (peek() == '\n') {
      ++Line;
      LineStart = Pos + 1;
    }
    ++Pos;
  }
  Diags.error(Start, "unterminated '/*' comment");
  return false;
}

// Skips whitespace and comments, keeping Line/LineStart up to date: this is
// the only place where Pos moves over a newline.
void Lexer::skipSpaceAndComments() {
  while (!atEnd()) {
    char C = peek();
    if (C == '\n') {
      ++Pos;
      ++Line;
      LineStart = Pos;
    } else if (isSpace(C)) {
      ++Pos;
    } else if (C == '/' && peek(1) == '/') {
      while (!atEnd() && peek() != '\n')
        ++Pos;
    } else if (C == '/' && peek(1) == '*') {
      if (!skipBlockComment()) {
        EofDiagnosed = true;
        return;
      }
    } else {
      return;
    }
  }
}

Token Lexer::lex() {
  skipSpaceAndComments();
  size_t Start = Pos;
  if (atEnd()) {
    Token T = makeToken(TokenKind::Eof, Start);
    T.Diagnosed = EofDiagnosed;
    return T;
  }
  char C = peek();
  if (isIdentStart(C))
    return lexIdentifierOrKeyword(Start);
  if (isDigit(C))
    return lexNumber(Start);
  return lexPunctuation(Start);
}

Token Lexer::lexIdentifierOrKeyword(size_t Start) {
  while (isIdentChar(peek()))
    ++Pos;
  std::string_view Text = Src.substr(Start, Pos - Start);
  TokenKind K = llvm::StringSwitch<TokenKind>(llvm::StringRef(Text.data(), Text.size()))
#define GRIDJIT_KEYWORD(Id, Spelling) .Case(Spelling, TokenKind::Kw##Id)
#include "gridjit/Parse/TokenKinds.def"
                    .Default(TokenKind::Identifier);
  return makeToken(K, Start);
}

// Lexes a number literal: decimal or `0x` hex digits, for decimals an
// optional fraction (only when a digit follows the '.', so that `0..n` is
// `0` `..` `n`) and exponent, then an optional type suffix. A decimal
// integer with an f32/f64 suffix is a float literal. Any identifier
// characters right after the digits are taken as the suffix, so `2x` is one
// token with a bad suffix rather than `2` followed by `x`.
Token Lexer::lexNumber(size_t Start) {
  bool IsHex = peek() == '0' && (peek(1) == 'x' || peek(1) == 'X');
  bool IsFloat = false;
  size_t DigitsStart = Start;
  if (IsHex) {
    Pos += 2;
    DigitsStart = Pos;
    while (isHexDigit(peek()))
      ++Pos;
  } else {
    while (isDigit(peek()))
      ++Pos;
    if (peek() == '.' && isDigit(peek(1))) {
      IsFloat = true;
      ++Pos;
      while (isDigit(peek()))
        ++Pos;
    }
    bool HasExponent =
        (peek() == 'e' || peek() == 'E') &&
        (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))));
    if (HasExponent) {
      IsFloat = true;
      Pos += 2;
      while (isDigit(peek()))
        ++Pos;
    }
  }
  size_t SuffixStart = Pos;
  while (isIdentChar(peek()))
    ++Pos;

  Token T = makeToken(IsFloat ? TokenKind::FloatLiteral : TokenKind::IntLiteral, Start);
  std::string_view Digits = Src.substr(DigitsStart, SuffixStart - DigitsStart);
  std::string_view SuffixText = Src.substr(SuffixStart, Pos - SuffixStart);

  if (IsHex && Digits.empty()) {
    Diags.error(T.Loc,
                "expected hexadecimal digits after '" + std::string(Src.substr(Start, 2)) + "'");
    T.Diagnosed = true;
    return T;
  }

  if (!SuffixText.empty()) {
    std::optional<ScalarKind> S = scalarFromName(SuffixText);
    bool Valid = false;
    if (S && isIntegerScalar(*S))
      Valid = !IsFloat;
    else if (S && isFloatScalar(*S))
      Valid = !IsHex; // `3f32` is a float; hex digits already took any 'f'
    if (!Valid) {
      Diags.error(T.Loc, "invalid suffix '" + escapeBytes(SuffixText) + "' on " +
                             (IsFloat ? "float" : "integer") + " literal");
      T.Diagnosed = true;
    } else {
      T.Suffix = S;
      if (isFloatScalar(*S)) {
        IsFloat = true;
        T.Kind = TokenKind::FloatLiteral;
      }
    }
  }

  if (IsFloat) {
    // APFloat, unlike strtod, does not depend on the C locale.
    llvm::APFloat F(llvm::APFloat::IEEEdouble());
    // The digits were scanned above, so they are well formed: an error
    // here would be a bug in this lexer. (Overflow is a status, not an
    // error: it gives infinity, which the verifier reports.)
    llvm::cantFail(F.convertFromString(llvm::StringRef(Digits.data(), Digits.size()),
                                       llvm::APFloat::rmNearestTiesToEven),
                   "scanned float literal digits are well formed");
    T.FloatValue = F.convertToDouble();
    return T;
  }

  if (llvm::StringRef(Digits.data(), Digits.size()).getAsInteger(IsHex ? 16 : 10, T.IntValue)) {
    T.IntValue = UINT64_MAX;
    if (!T.Diagnosed)
      Diags.error(T.Loc, "integer literal is too large");
    T.Diagnosed = true;
  }
  return T;
}

Token Lexer::lexPunctuation(size_t Start) {
  char C = peek();
  char N = peek(1);
  // Longest match first: three-character, then two-, then one-character.
  auto Take = [&](TokenKind K, size_t Len) {
    Pos += Len;
    return makeToken(K, Start);
  };
  if (C == '<' && N == '<' && peek(2) == '=')
    return Take(TokenKind::LessLessEq, 3);
  if (C == '>' && N == '>' && peek(2) == '=')
    return Take(TokenKind::GreaterGreaterEq, 3);
  switch (C) {
  case '(':
    return Take(TokenKind::LParen, 1);
  case ')':
    return Take(TokenKind::RParen, 1);
  case '{':
    return Take(TokenKind::LBrace, 1);
  case '}':
    return Take(TokenKind::RBrace, 1);
  case '[':
    return Take(TokenKind::LBracket, 1);
  case ']':
    return Take(TokenKind::RBracket, 1);
  case ',':
    return Take(TokenKind::Comma, 1);
  case ';':
    return Take(TokenKind::Semi, 1);
  case ':':
    return Take(TokenKind::Colon, 1);
  case '?':
    return Take(TokenKind::Question, 1);
  case '"':
    return lexString(Start);
  case '~':
    return Take(TokenKind::Tilde, 1);
  case '.':
    return N == '.' ? Take(TokenKind::DotDot, 2) : Take(TokenKind::Dot, 1);
  case '+':
    return N == '=' ? Take(TokenKind::PlusEq, 2) : Take(TokenKind::Plus, 1);
  case '-':
    if (N == '>')
      return Take(TokenKind::Arrow, 2);
    return N == '=' ? Take(TokenKind::MinusEq, 2) : Take(TokenKind::Minus, 1);
  case '*':
    return N == '=' ? Take(TokenKind::StarEq, 2) : Take(TokenKind::Star, 1);
  case '/':
    return N == '=' ? Take(TokenKind::SlashEq, 2) : Take(TokenKind::Slash, 1);
  case '%':
    return N == '=' ? Take(TokenKind::PercentEq, 2) : Take(TokenKind::Percent, 1);
  case '^':
    return N == '=' ? Take(TokenKind::CaretEq, 2) : Take(TokenKind::Caret, 1);
  case '!':
    return N == '=' ? Take(TokenKind::BangEq, 2) : Take(TokenKind::Bang, 1);
  case '=':
    return N == '=' ? Take(TokenKind::EqEq, 2) : Take(TokenKind::Equal, 1);
  case '&':
    if (N == '&')
      return Take(TokenKind::AmpAmp, 2);
    return N == '=' ? Take(TokenKind::AmpEq, 2) : Take(TokenKind::Amp, 1);
  case '|':
    if (N == '|')
      return Take(TokenKind::PipePipe, 2);
    return N == '=' ? Take(TokenKind::PipeEq, 2) : Take(TokenKind::Pipe, 1);
  case '<':
    if (N == '<')
      return Take(TokenKind::LessLess, 2);
    return N == '=' ? Take(TokenKind::LessEq, 2) : Take(TokenKind::Less, 1);
  case '>':
    if (N == '>')
      return Take(TokenKind::GreaterGreater, 2);
    return N == '=' ? Take(TokenKind::GreaterEq, 2) : Take(TokenKind::Greater, 1);
  default:
    return lexInvalidCharacter(Start);
  }
}

// A string literal (only print's format, which the parser checks): up to
// the next '"' that no backslash escapes, on the same line. Its escapes are
// read by IR/PrintFormat.h, which reports a bad one at its column; here
// only the end matters.
Token Lexer::lexString(size_t Start) {
  ++Pos;
  while (!atEnd() && peek() != '"' && peek() != '\n')
    Pos += peek() == '\\' && Pos + 1 < Src.size() && Src[Pos + 1] != '\n' ? 2 : 1;
  bool Closed = !atEnd() && peek() == '"';
  if (Closed)
    ++Pos;
  Token T = makeToken(TokenKind::StringLiteral, Start);
  T.StringBody = Src.substr(Start + 1, Pos - Start - (Closed ? 2 : 1));
  if (!Closed) {
    Diags.error(T.Loc, "unterminated string literal (a string ends on its line)");
    T.Diagnosed = true;
  }
  return T;
}

// A character KIR does not use. A non-ASCII UTF-8 sequence (a lead byte and
// its continuation bytes) is one token, so that one character gives one
// error.
Token Lexer::lexInvalidCharacter(size_t Start) {
  auto Byte = static_cast<unsigned char>(peek());
  ++Pos;
  if (Byte >= 0x80)
    for (int I = 0; I < 3 && (static_cast<unsigned char>(peek()) & 0xC0) == 0x80; ++I)
      ++Pos;
  Token T = makeToken(TokenKind::Error, Start);
  Diags.error(T.Loc, "unexpected character '" + escapeBytes(T.Text) + "'");
  T.Diagnosed = true;
  return T;
}
