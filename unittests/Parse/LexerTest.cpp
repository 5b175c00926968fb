//===- LexerTest.cpp - KIR tokens -----------------------------------------===//
//
// Part of gridjit. Token kinds, literal values and suffixes, locations,
// comments, and the lexer's own errors.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Parse/Lexer.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace gridjit;

namespace {

/// Every token of \p Src up to and excluding Eof, and the errors reported
/// while lexing. The tokens' text points into \p Src, which the caller
/// keeps alive (the tests pass string literals).
struct Lexed {
  std::vector<Token> Toks;
  std::vector<Diagnostic> Diags;
};

Lexed lexAll(std::string_view Src) {
  Lexed L;
  DiagnosticEngine Diags("test.kir", Src);
  Lexer Lex(Src, Diags);
  // Bounded, so that a lexer that stops making progress fails the test
  // instead of hanging it.
  for (size_t I = 0; I <= Src.size() + 1; ++I) {
    Token T = Lex.lex();
    if (T.is(TokenKind::Eof))
      break;
    L.Toks.push_back(T);
  }
  L.Diags = Diags.getDiagnostics();
  return L;
}

std::vector<TokenKind> kinds(std::string_view Src) {
  std::vector<TokenKind> K;
  for (const Token &T : lexAll(Src).Toks)
    K.push_back(T.Kind);
  return K;
}

/// The single token of \p Src, which must lex without errors.
Token single(std::string_view Src) {
  Lexed L = lexAll(Src);
  EXPECT_EQ(L.Toks.size(), 1u) << Src;
  EXPECT_TRUE(L.Diags.empty()) << Src << ": " << L.Diags[0].Message;
  return L.Toks.empty() ? Token() : L.Toks[0];
}

/// The one error message for \p Src.
std::string lexError(std::string_view Src) {
  Lexed L = lexAll(Src);
  EXPECT_EQ(L.Diags.size(), 1u) << Src;
  return L.Diags.empty() ? "" : L.Diags[0].Message;
}

using TK = TokenKind;

TEST(LexerTest, Empty) {
  EXPECT_TRUE(lexAll("").Toks.empty());
  EXPECT_TRUE(lexAll("  \n\t\r\n // c\n /* c */ ").Toks.empty());
  EXPECT_TRUE(lexAll("  \n\t\r\n // c\n /* c */ ").Diags.empty());
}

TEST(LexerTest, EofIsRepeated) {
  std::string Src = "x";
  DiagnosticEngine Diags("t", Src);
  Lexer Lex(Src, Diags);
  EXPECT_EQ(Lex.lex().Kind, TK::Identifier);
  for (int I = 0; I < 3; ++I) {
    Token T = Lex.lex();
    EXPECT_EQ(T.Kind, TK::Eof);
    EXPECT_FALSE(T.Diagnosed);
    EXPECT_EQ(T.Loc.Line, 1u);
    EXPECT_EQ(T.Loc.Col, 2u);
  }
}

TEST(LexerTest, Keywords) {
  EXPECT_EQ(kinds("kernel fn const let var shared if else while for "
                  "break continue return true false"),
            (std::vector<TK>{TK::KwKernel, TK::KwFn, TK::KwConst, TK::KwLet, TK::KwVar,
                             TK::KwShared, TK::KwIf, TK::KwElse, TK::KwWhile, TK::KwFor,
                             TK::KwBreak, TK::KwContinue, TK::KwReturn, TK::KwTrue, TK::KwFalse}));
}

// `in`, `step` and `as` are contextual keywords: the parser reads them as
// keywords in their one position, so the lexer makes identifiers of them.
TEST(LexerTest, ContextualKeywordsAreIdentifiers) {
  EXPECT_EQ(kinds("in step as"), (std::vector<TK>{TK::Identifier, TK::Identifier, TK::Identifier}));
}

TEST(LexerTest, Identifiers) {
  Lexed L = lexAll("x _ _a1 Kernel kernels ptr i32 local thread_idx");
  ASSERT_EQ(L.Toks.size(), 9u);
  for (const Token &T : L.Toks)
    EXPECT_EQ(T.Kind, TK::Identifier) << T.Text;
  EXPECT_EQ(L.Toks[2].Text, "_a1");
  EXPECT_EQ(L.Toks[3].Text, "Kernel");
  EXPECT_EQ(L.Toks[4].Text, "kernels");
}

TEST(LexerTest, Punctuation) {
  EXPECT_EQ(
      kinds("( ) { } [ ] , ; : . .. ->"),
      (std::vector<TK>{TK::LParen, TK::RParen, TK::LBrace, TK::RBrace, TK::LBracket, TK::RBracket,
                       TK::Comma, TK::Semi, TK::Colon, TK::Dot, TK::DotDot, TK::Arrow}));
  EXPECT_EQ(
      kinds("+ - * / % & | ^ ~ ! < > <= >= == != && || << >>"),
      (std::vector<TK>{TK::Plus,   TK::Minus,   TK::Star,     TK::Slash,     TK::Percent,
                       TK::Amp,    TK::Pipe,    TK::Caret,    TK::Tilde,     TK::Bang,
                       TK::Less,   TK::Greater, TK::LessEq,   TK::GreaterEq, TK::EqEq,
                       TK::BangEq, TK::AmpAmp,  TK::PipePipe, TK::LessLess,  TK::GreaterGreater}));
  EXPECT_EQ(
      kinds("= += -= *= /= %= &= |= ^= <<= >>="),
      (std::vector<TK>{TK::Equal, TK::PlusEq, TK::MinusEq, TK::StarEq, TK::SlashEq, TK::PercentEq,
                       TK::AmpEq, TK::PipeEq, TK::CaretEq, TK::LessLessEq, TK::GreaterGreaterEq}));
}

TEST(LexerTest, LongestMatch) {
  EXPECT_EQ(kinds("a<<=b"), (std::vector<TK>{TK::Identifier, TK::LessLessEq, TK::Identifier}));
  EXPECT_EQ(kinds("<<<"), (std::vector<TK>{TK::LessLess, TK::Less}));
  EXPECT_EQ(kinds("..."), (std::vector<TK>{TK::DotDot, TK::Dot}));
  EXPECT_EQ(kinds("->-"), (std::vector<TK>{TK::Arrow, TK::Minus}));
  EXPECT_EQ(kinds("--x"), (std::vector<TK>{TK::Minus, TK::Minus, TK::Identifier}));
  EXPECT_EQ(kinds("&&&"), (std::vector<TK>{TK::AmpAmp, TK::Amp}));
  EXPECT_EQ(kinds("===!"), (std::vector<TK>{TK::EqEq, TK::Equal, TK::Bang}));
}

TEST(LexerTest, IntegerLiterals) {
  Token T = single("7");
  EXPECT_EQ(T.Kind, TK::IntLiteral);
  EXPECT_EQ(T.IntValue, 7u);
  EXPECT_FALSE(T.Suffix);

  T = single("0xff");
  EXPECT_EQ(T.Kind, TK::IntLiteral);
  EXPECT_EQ(T.IntValue, 255u);
  EXPECT_FALSE(T.Suffix);

  T = single("0XAbC");
  EXPECT_EQ(T.IntValue, 0xabcu);

  T = single("7u32");
  EXPECT_EQ(T.Kind, TK::IntLiteral);
  EXPECT_EQ(T.IntValue, 7u);
  EXPECT_EQ(T.Suffix, ScalarKind::U32);
  EXPECT_EQ(T.Text, "7u32");

  T = single("1i64");
  EXPECT_EQ(T.Suffix, ScalarKind::I64);
  EXPECT_EQ(single("3i8").Suffix, ScalarKind::I8);
  EXPECT_EQ(single("3i16").Suffix, ScalarKind::I16);
  EXPECT_EQ(single("3u8").Suffix, ScalarKind::U8);
  EXPECT_EQ(single("3u16").Suffix, ScalarKind::U16);
  EXPECT_EQ(single("3u64").Suffix, ScalarKind::U64);

  T = single("0xffu32");
  EXPECT_EQ(T.IntValue, 255u);
  EXPECT_EQ(T.Suffix, ScalarKind::U32);

  // Hex digits absorb 'f': this is one hex number, not 0xfff with f32.
  T = single("0xfff32");
  EXPECT_EQ(T.Kind, TK::IntLiteral);
  EXPECT_EQ(T.IntValue, 0xfff32u);
  EXPECT_FALSE(T.Suffix);

  T = single("0");
  EXPECT_EQ(T.IntValue, 0u);
  T = single("007");
  EXPECT_EQ(T.IntValue, 7u);

  T = single("18446744073709551615");
  EXPECT_EQ(T.IntValue, UINT64_MAX);
  T = single("0xffffffffffffffffu64");
  EXPECT_EQ(T.IntValue, UINT64_MAX);
  // The magnitude of INT64_MIN fits; the verifier checks the range.
  T = single("9223372036854775808i64");
  EXPECT_EQ(T.IntValue, 9223372036854775808ull);
}

TEST(LexerTest, FloatLiterals) {
  Token T = single("1.0");
  EXPECT_EQ(T.Kind, TK::FloatLiteral);
  EXPECT_EQ(T.FloatValue, 1.0);
  EXPECT_FALSE(T.Suffix);

  EXPECT_EQ(single("2.5e-3").FloatValue, 2.5e-3);
  EXPECT_EQ(single("1e5").FloatValue, 1e5);
  EXPECT_EQ(single("1e5").Kind, TK::FloatLiteral);
  EXPECT_EQ(single("1.5E+3").FloatValue, 1.5e3);
  EXPECT_EQ(single("0.1").FloatValue, 0.1);
  EXPECT_EQ(single("123456789012345678901234567890.0").FloatValue,
            123456789012345678901234567890.0);

  T = single("1.0f64");
  EXPECT_EQ(T.Kind, TK::FloatLiteral);
  EXPECT_EQ(T.FloatValue, 1.0);
  EXPECT_EQ(T.Suffix, ScalarKind::F64);

  // A decimal integer with a float suffix is a float literal.
  T = single("3f32");
  EXPECT_EQ(T.Kind, TK::FloatLiteral);
  EXPECT_EQ(T.FloatValue, 3.0);
  EXPECT_EQ(T.Suffix, ScalarKind::F32);

  T = single("1e-2f32");
  EXPECT_EQ(T.FloatValue, 1e-2);
  EXPECT_EQ(T.Suffix, ScalarKind::F32);

  // Out of double's range: infinity; the verifier rejects it.
  EXPECT_TRUE(std::isinf(single("1e999").FloatValue));
}

TEST(LexerTest, DotAfterNumber) {
  // A '.' starts a fraction only when a digit follows it.
  EXPECT_EQ(kinds("0..n"), (std::vector<TK>{TK::IntLiteral, TK::DotDot, TK::Identifier}));
  EXPECT_EQ(kinds("1..2"), (std::vector<TK>{TK::IntLiteral, TK::DotDot, TK::IntLiteral}));
  EXPECT_EQ(kinds("1.5..2"), (std::vector<TK>{TK::FloatLiteral, TK::DotDot, TK::IntLiteral}));
  EXPECT_EQ(kinds("1.x"), (std::vector<TK>{TK::IntLiteral, TK::Dot, TK::Identifier}));
  EXPECT_EQ(kinds("1."), (std::vector<TK>{TK::IntLiteral, TK::Dot}));
  EXPECT_EQ(kinds(".5"), (std::vector<TK>{TK::Dot, TK::IntLiteral}));
  // An exponent needs digits; `1e+x` is `1e` (bad suffix) `+` `x`.
  EXPECT_EQ(kinds("2-1"), (std::vector<TK>{TK::IntLiteral, TK::Minus, TK::IntLiteral}));
}

TEST(LexerTest, LiteralErrors) {
  EXPECT_EQ(lexError("18446744073709551616"), "integer literal is too large");
  EXPECT_EQ(lexError("0x10000000000000000"), "integer literal is too large");
  EXPECT_EQ(lexError("1u7"), "invalid suffix 'u7' on integer literal");
  EXPECT_EQ(lexError("2x"), "invalid suffix 'x' on integer literal");
  EXPECT_EQ(lexError("1_000"), "invalid suffix '_000' on integer literal");
  EXPECT_EQ(lexError("1e"), "invalid suffix 'e' on integer literal");
  EXPECT_EQ(lexError("1.0i32"), "invalid suffix 'i32' on float literal");
  EXPECT_EQ(lexError("1.0f"), "invalid suffix 'f' on float literal");
  EXPECT_EQ(lexError("1.0bool"), "invalid suffix 'bool' on float literal");
  EXPECT_EQ(lexError("1bool"), "invalid suffix 'bool' on integer literal");
  EXPECT_EQ(lexError("0xffg"), "invalid suffix 'g' on integer literal");
  EXPECT_EQ(lexError("0x"), "expected hexadecimal digits after '0x'");
  EXPECT_EQ(lexError("0xu32"), "expected hexadecimal digits after '0x'");
  EXPECT_EQ(lexError("0X"), "expected hexadecimal digits after '0X'");

  // The bad literal is still one token, marked as diagnosed, so that the
  // parser reports nothing more about it.
  Lexed L = lexAll("1u7 + 2");
  ASSERT_EQ(L.Toks.size(), 3u);
  EXPECT_EQ(L.Toks[0].Kind, TK::IntLiteral);
  EXPECT_TRUE(L.Toks[0].Diagnosed);
  EXPECT_EQ(L.Toks[0].Text, "1u7");
  EXPECT_FALSE(L.Toks[2].Diagnosed);
  // Only one error for a literal that is both too large and badly suffixed.
  EXPECT_EQ(lexError("99999999999999999999999u7"), "invalid suffix 'u7' on integer literal");
}

// print's format: the text between the quotes as written, escapes and
// all (an escaped quote does not end it); the next token follows.
TEST(LexerTest, StringLiterals) {
  Lexed L = lexAll(R"(print("a \"{}\" \\", x))");
  ASSERT_TRUE(L.Diags.empty());
  ASSERT_EQ(L.Toks.size(), 6u);
  EXPECT_EQ(L.Toks[2].Kind, TK::StringLiteral);
  EXPECT_EQ(L.Toks[2].StringBody, R"(a \"{}\" \\)");
  EXPECT_EQ(L.Toks[2].Text, R"("a \"{}\" \\")");
  EXPECT_EQ(L.Toks[2].Loc.Col, 7u);
  EXPECT_EQ(L.Toks[3].Kind, TK::Comma);
  // Empty, and a backslash before the end of the line does not hide it.
  EXPECT_EQ(lexAll(R"("")").Toks[0].StringBody, "");
  Lexed Open = lexAll("\"a\\\nb");
  ASSERT_EQ(Open.Diags.size(), 1u);
  EXPECT_TRUE(Open.Toks[0].Diagnosed);
  EXPECT_EQ(Open.Toks.back().Text, "b");
}

TEST(LexerTest, Comments) {
  Lexed L = lexAll("a // b c\nd /* e\nf */ g /* ** / */ h//");
  ASSERT_EQ(L.Toks.size(), 4u);
  EXPECT_EQ(L.Toks[0].Text, "a");
  EXPECT_EQ(L.Toks[1].Text, "d");
  EXPECT_EQ(L.Toks[2].Text, "g");
  EXPECT_EQ(L.Toks[3].Text, "h");
  EXPECT_TRUE(L.Diags.empty());
  // Not nested: the first '*/' ends the comment.
  EXPECT_EQ(kinds("/* /* */ x */"), (std::vector<TK>{TK::Identifier, TK::Star, TK::Slash}));
  // '/' alone and '/=' are operators.
  EXPECT_EQ(kinds("a / b /= c"), (std::vector<TK>{TK::Identifier, TK::Slash, TK::Identifier,
                                                  TK::SlashEq, TK::Identifier}));
}

TEST(LexerTest, UnterminatedComment) {
  std::string Src = "x\n  /* never\nends";
  DiagnosticEngine Diags("t", Src);
  Lexer Lex(Src, Diags);
  EXPECT_EQ(Lex.lex().Kind, TK::Identifier);
  Token T = Lex.lex();
  EXPECT_EQ(T.Kind, TK::Eof);
  EXPECT_TRUE(T.Diagnosed);
  ASSERT_EQ(Diags.getDiagnostics().size(), 1u);
  EXPECT_EQ(Diags.getDiagnostics()[0].Message, "unterminated '/*' comment");
  EXPECT_EQ(Diags.getDiagnostics()[0].Loc.Line, 2u);
  EXPECT_EQ(Diags.getDiagnostics()[0].Loc.Col, 3u);
  EXPECT_EQ(lexError("/*/"), "unterminated '/*' comment");
  EXPECT_EQ(lexError("/*"), "unterminated '/*' comment");
}

TEST(LexerTest, Locations) {
  Lexed L = lexAll("kernel k\n  (x:\ti32)\n\n/* a\nb */ y\r\n  z");
  ASSERT_EQ(L.Toks.size(), 9u);
  auto At = [&](size_t I, unsigned Line, unsigned Col) {
    EXPECT_EQ(L.Toks[I].Loc.Line, Line) << "token " << I;
    EXPECT_EQ(L.Toks[I].Loc.Col, Col) << "token " << I;
  };
  At(0, 1, 1);  // kernel
  At(1, 1, 8);  // k
  At(2, 2, 3);  // (
  At(3, 2, 4);  // x
  At(4, 2, 5);  // :
  At(5, 2, 7);  // i32 (a tab is one column)
  At(6, 2, 10); // )
  At(7, 5, 6);  // y, after a comment spanning lines
  At(8, 6, 3);  // z, after "\r\n"
}

TEST(LexerTest, InvalidCharacters) {
  EXPECT_EQ(lexError("@"), "unexpected character '@'");
  EXPECT_EQ(lexError("a $ b"), "unexpected character '$'");
  EXPECT_EQ(lexError("#"), "unexpected character '#'");
  EXPECT_EQ(lexError("\"s"), "unterminated string literal (a string ends on its line)");
  EXPECT_EQ(lexError("\"s\nt"), "unterminated string literal (a string ends on its line)");
  EXPECT_EQ(lexError(std::string_view("\0", 1)), "unexpected character '\\x00'");
  EXPECT_EQ(lexError("\x7f"), "unexpected character '\\x7F'");
  EXPECT_EQ(lexError("\x01"), "unexpected character '\\x01'");
  // A UTF-8 sequence is one character, one error.
  EXPECT_EQ(lexError("\xC3\xA9"), "unexpected character '\\xC3\\xA9'");
  EXPECT_EQ(lexError("x\xE2\x82\xAC"), "unexpected character '\\xE2\\x82\\xAC'");
  // A stray continuation byte or a truncated sequence.
  EXPECT_EQ(lexError("\xA9"), "unexpected character '\\xA9'");
  EXPECT_EQ(lexError("\xE2\x82"), "unexpected character '\\xE2\\x82'");

  Lexed L = lexAll(std::string_view("a\0b", 3));
  ASSERT_EQ(L.Toks.size(), 3u);
  EXPECT_EQ(L.Toks[1].Kind, TK::Error);
  EXPECT_TRUE(L.Toks[1].Diagnosed);
  EXPECT_EQ(L.Toks[1].Loc.Col, 2u);
  EXPECT_EQ(L.Toks[2].Text, "b");
}

TEST(LexerTest, NulInsideComments) {
  // NUL bytes are not terminators: comments and whitespace go on past them.
  std::string Src("a /* \0 */ b // \0 c\nd", 20);
  Lexed L = lexAll(Src);
  EXPECT_TRUE(L.Diags.empty());
  ASSERT_EQ(L.Toks.size(), 3u);
  EXPECT_EQ(L.Toks[2].Text, "d");
}

TEST(LexerTest, TokenKindNames) {
  EXPECT_EQ(tokenKindName(TK::Semi), "';'");
  EXPECT_EQ(tokenKindName(TK::KwWhile), "'while'");
  EXPECT_EQ(tokenKindName(TK::GreaterGreaterEq), "'>>='");
  EXPECT_EQ(tokenKindName(TK::Eof), "end of file");
  EXPECT_EQ(tokenKindName(TK::Identifier), "identifier");
}

} // namespace
