//===- Lexer.h - KIR source text to tokens ----------------------*- C++ -*-===//
//
// Part of gridjit. The lexer turns KIR source into tokens one at a time. It
// reports malformed input (unknown characters, bad number literals, an
// unterminated comment) into a DiagnosticEngine and marks the token it
// returns as already diagnosed, so that the parser does not report a second
// error for the same text.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_PARSE_LEXER_H
#define GRIDJIT_PARSE_LEXER_H

#include "gridjit/IR/Type.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/SourceLoc.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gridjit {

/// The kinds of KIR tokens, one per row of TokenKinds.def: the tokens
/// without a fixed spelling (Eof, Error, Identifier, IntLiteral,
/// FloatLiteral), the keywords (`KwKernel`, ...), then punctuation and
/// operators.
enum class TokenKind : uint8_t {
#define GRIDJIT_TOKEN(Id, Name) Id,
#define GRIDJIT_KEYWORD(Id, Spelling) Kw##Id,
#define GRIDJIT_PUNCT(Id, Spelling) Id,
#include "gridjit/Parse/TokenKinds.def"
};

/// A human-readable name for a token kind, for messages and tests: the
/// spelling in single quotes for keywords and punctuation (`'while'`,
/// `'<<='`), a word for the others (`identifier`, `end of file`).
std::string_view tokenKindName(TokenKind K);

/// One token. Text is a view into the source buffer given to the Lexer, so
/// a token must not outlive that buffer.
struct Token {
  TokenKind Kind = TokenKind::Eof;
  /// The token's spelling in the source (empty for Eof).
  std::string_view Text;
  /// Line and column (1-based, columns count bytes) of its first character.
  SourceLoc Loc;
  /// IntLiteral: the value (the magnitude; a leading `-` is an operator).
  uint64_t IntValue = 0;
  /// FloatLiteral: the value, rounded to the nearest double.
  double FloatValue = 0;
  /// StringLiteral: the text between the quotes as written (escapes not
  /// decoded; IR/PrintFormat.h reads them), on one line.
  std::string_view StringBody;
  /// Int/FloatLiteral: the type suffix as written, if any.
  std::optional<ScalarKind> Suffix;
  /// True when the lexer has already reported an error about this token (or,
  /// for Eof, about the input just before it). The parser reports nothing
  /// more at such a token.
  bool Diagnosed = false;

  bool is(TokenKind K) const { return Kind == K; }
  bool isNot(TokenKind K) const { return Kind != K; }
};

/// Splits KIR source into tokens. Comments (`//` to end of line, `/* */`,
/// not nested) and whitespace are skipped. Never reads outside the buffer
/// and makes progress on every call, whatever the input (NUL bytes and
/// non-ASCII bytes included). Not thread-safe; one lexer per buffer.
class Lexer {
public:
  /// \p Source must outlive the lexer and the tokens it returns. Errors are
  /// reported into \p Diags.
  Lexer(std::string_view Source, DiagnosticEngine &Diags) : Src(Source), Diags(Diags) {}

  /// Returns the next token; Eof at the end of the input and on every call
  /// after that.
  Token lex();

private:
  char peek(size_t Ahead = 0) const { return Pos + Ahead < Src.size() ? Src[Pos + Ahead] : '\0'; }
  bool atEnd(size_t Ahead = 0) const { return Pos + Ahead >= Src.size(); }
  SourceLoc locAt(size_t Offset) const;
  void skipSpaceAndComments();
  bool skipBlockComment();
  Token makeToken(TokenKind K, size_t Start) const;
  Token lexIdentifierOrKeyword(size_t Start);
  Token lexNumber(size_t Start);
  Token lexPunctuation(size_t Start);
  Token lexInvalidCharacter(size_t Start);
  Token lexString(size_t Start);

  std::string_view Src;
  DiagnosticEngine &Diags;
  size_t Pos = 0;
  /// Line of the character at Pos, and the offset where that line starts.
  unsigned Line = 1;
  size_t LineStart = 0;
  /// Set when the input ended inside a `/* */` comment (already reported).
  bool EofDiagnosed = false;
};

} // namespace gridjit

#endif // GRIDJIT_PARSE_LEXER_H
