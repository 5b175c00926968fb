//===- Parser.cpp - KIR text to a Module ----------------------------------===//
//
// Part of gridjit. A recursive-descent parser with one function per grammar
// rule (binary operators by precedence climbing). It checks syntax only;
// the verifier checks types, scopes and the other semantic rules.
//
// Error handling: every problem is reported into a DiagnosticEngine, and
// parsing goes on so that one run reports every independent error:
//  - a failing rule returns null (or an invalid Type) after reporting;
//  - a failed statement is skipped up to the next `;` at its brace depth or
//    the end of its block; a failed module-level declaration up to the next
//    `kernel`, `fn` or `const`;
//  - at most one error is reported per source position, and none at a token
//    the lexer has already reported (Token::Diagnosed), to avoid cascades.
//
// Robustness: recursion (blocks, parentheses, unary operators, arguments,
// indices) and the height of expression trees are limited to MaxNesting,
// so neither this parser nor a later pass recursing over the tree (or
// destroying it) can overflow the stack; every loop consumes a token or
// exits.
//
// Locations: a node's location is its first token, except for
//  BinaryExpr (first token of the LHS), CondExpr (the `?`), UnaryExpr (the operator),
//  CastExpr (`as`), CallExpr (the callee name), IndexExpr (`[`),
//  MemberExpr (`.`); VarDecl::Loc is the name's location.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Parse/Parser.h"
#include "gridjit/Parse/Lexer.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

using namespace gridjit;

namespace {

/// Deepest nesting of blocks, parentheses, unary operators and the like,
/// and highest expression tree, that the parser accepts.
constexpr unsigned MaxNesting = 256;

/// An expression being built, with what the parser needs to know about it
/// besides the AST: the location of its first token (parentheses are not
/// kept in the AST, so this may be a '(' ) and the height of its tree (a
/// leaf is 1), checked against MaxNesting as the tree grows.
struct ParsedExpr {
  ExprPtr E;
  SourceLoc Start;
  unsigned Height = 0;
  explicit operator bool() const { return E != nullptr; }
};

/// Binary operator precedence levels, lowest first. 0 means "not a binary
/// operator".
enum Precedence : unsigned {
  PrecNone = 0,
  PrecLOr,
  PrecLAnd,
  PrecComparison, // non-associative
  PrecBitOr,
  PrecBitXor,
  PrecBitAnd,
  PrecShift,
  PrecAdditive,
  PrecMultiplicative,
};

struct BinaryOpInfo {
  Precedence Prec = PrecNone;
  BinaryOp Op = BinaryOp::Add;
};

BinaryOpInfo binaryOpInfo(TokenKind K) {
  switch (K) {
  case TokenKind::PipePipe:
    return {PrecLOr, BinaryOp::LOr};
  case TokenKind::AmpAmp:
    return {PrecLAnd, BinaryOp::LAnd};
  case TokenKind::EqEq:
    return {PrecComparison, BinaryOp::Eq};
  case TokenKind::BangEq:
    return {PrecComparison, BinaryOp::Ne};
  case TokenKind::Less:
    return {PrecComparison, BinaryOp::Lt};
  case TokenKind::LessEq:
    return {PrecComparison, BinaryOp::Le};
  case TokenKind::Greater:
    return {PrecComparison, BinaryOp::Gt};
  case TokenKind::GreaterEq:
    return {PrecComparison, BinaryOp::Ge};
  case TokenKind::Pipe:
    return {PrecBitOr, BinaryOp::Or};
  case TokenKind::Caret:
    return {PrecBitXor, BinaryOp::Xor};
  case TokenKind::Amp:
    return {PrecBitAnd, BinaryOp::And};
  case TokenKind::LessLess:
    return {PrecShift, BinaryOp::Shl};
  case TokenKind::GreaterGreater:
    return {PrecShift, BinaryOp::Shr};
  case TokenKind::Plus:
    return {PrecAdditive, BinaryOp::Add};
  case TokenKind::Minus:
    return {PrecAdditive, BinaryOp::Sub};
  case TokenKind::Star:
    return {PrecMultiplicative, BinaryOp::Mul};
  case TokenKind::Slash:
    return {PrecMultiplicative, BinaryOp::Div};
  case TokenKind::Percent:
    return {PrecMultiplicative, BinaryOp::Rem};
  default:
    return {};
  }
}

std::optional<UnaryOp> unaryOp(TokenKind K) {
  switch (K) {
  case TokenKind::Minus:
    return UnaryOp::Neg;
  case TokenKind::Bang:
    return UnaryOp::Not;
  case TokenKind::Tilde:
    return UnaryOp::BitNot;
  case TokenKind::Amp:
    return UnaryOp::AddrOf;
  default:
    return std::nullopt;
  }
}

std::optional<AssignOp> assignOp(TokenKind K) {
  switch (K) {
  case TokenKind::Equal:
    return AssignOp::Assign;
  case TokenKind::PlusEq:
    return AssignOp::Add;
  case TokenKind::MinusEq:
    return AssignOp::Sub;
  case TokenKind::StarEq:
    return AssignOp::Mul;
  case TokenKind::SlashEq:
    return AssignOp::Div;
  case TokenKind::PercentEq:
    return AssignOp::Rem;
  case TokenKind::AmpEq:
    return AssignOp::And;
  case TokenKind::PipeEq:
    return AssignOp::Or;
  case TokenKind::CaretEq:
    return AssignOp::Xor;
  case TokenKind::LessLessEq:
    return AssignOp::Shl;
  case TokenKind::GreaterGreaterEq:
    return AssignOp::Shr;
  default:
    return std::nullopt;
  }
}

/// The spellings of the contextual keywords (Keywords.def): the lexer makes
/// identifiers of them, and the parser compares an identifier's text.
namespace contextual {
#define GRIDJIT_CONTEXTUAL_KEYWORD(Id, Spelling) constexpr std::string_view Id = Spelling;
#include "gridjit/IR/Keywords.def"
} // namespace contextual

/// The tokens that start a module-level declaration; recovery stops there.
bool isDeclKeyword(TokenKind K) {
  return K == TokenKind::KwKernel || K == TokenKind::KwFn || K == TokenKind::KwConst;
}

bool canStartExpression(TokenKind K) {
  switch (K) {
  case TokenKind::Identifier:
  case TokenKind::IntLiteral:
  case TokenKind::FloatLiteral:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
  case TokenKind::KwNull:
  case TokenKind::LParen:
    return true;
  default:
    return unaryOp(K).has_value();
  }
}

class Parser {
public:
  Parser(std::string_view Source, DiagnosticEngine &Diags) : Lex(Source, Diags), Diags(Diags) {
    Tok = Lex.lex();
  }

  void parseModule(Module &M);

private:
  class NestingScope;

  // Tokens and diagnostics.
  void consume();
  bool consumeIf(TokenKind K);
  bool atContextual(std::string_view Keyword) const;
  bool consumeContextual(std::string_view Keyword);
  /// The token after Tok (lexed once, then kept for consume()).
  const Token &peekToken();
  /// Reads `out` / `inout` before a parameter or an argument: a mode only
  /// when a name follows (`out: ptr<i32>` and `out[i]` name a value `out`).
  ParamMode parseParamMode();
  bool consumeGreater();
  void error(SourceLoc Loc, std::string Message);
  void errorAtTok(std::string Message);
  void errorExpected(std::string_view What);
  std::string describeTok() const;
  bool expect(TokenKind K, std::string_view Context);
  bool expectSemi(std::string_view After = "statement");
  void reportTooDeep(SourceLoc Loc);

  // Recovery.
  void skipStatement();
  void skipToDecl();

  // Module level.
  std::unique_ptr<Decl> parseDecl();
  std::unique_ptr<ConstDecl> parseConstDecl();
  bool parseArrayInit(ArrayInit &Init, unsigned Level);
  std::unique_ptr<StructDecl> parseStructDecl();
  /// The struct declared so far, or the builtin vector type, named \p Name.
  const Aggregate *lookupAggregate(std::string_view Name) const;
  ParsedExpr parseStructLiteral(SourceLoc Loc, std::string Name);
  std::unique_ptr<FunctionDecl> parseFunction();
  std::unique_ptr<VarDecl> parseParam();
  bool parseParamList(FunctionDecl &F);

  // Types.
  Type parseType(bool AllowArray, VarDecl *SizesOf = nullptr);
  Type parseArrayType(bool AllowArray, VarDecl *SizesOf);
  Type parseArrayTypeRest(std::vector<ExprPtr> &Sizes, unsigned &Open);
  void skipArrayTypeRest(unsigned BracketDepth);
  Type parsePointerType();
  std::optional<ScalarKind> parseScalarTypeName(std::string_view What);

  // Statements.
  BlockPtr parseBlock(std::string_view Context);
  StmtPtr parseStatement();
  StmtPtr parseDeclStmt();
  StmtPtr parseIfStmt();
  bool parseIfHead(IfStmt &S);
  StmtPtr parseWhileStmt();
  StmtPtr parseForStmt();
  StmtPtr parseRangeFor(SourceLoc Loc);
  StmtPtr parseGeneralFor(SourceLoc Loc);
  StmtPtr parseJumpStmt();
  StmtPtr parseReturnStmt();
  /// An assignment or a call statement; \p ForUpdate: the update of a
  /// general `for` (an assignment only, without its ';').
  StmtPtr parseAssignOrCallStmt(bool ForUpdate = false);

  // Expressions.
  ExprPtr parseExpr();
  ParsedExpr parseExprWithInfo();
  ParsedExpr parseConditional();
  ParsedExpr parseBinary(unsigned MinPrec);
  ParsedExpr parseCast();
  ParsedExpr parseUnary();
  ParsedExpr parsePostfix();
  ParsedExpr parseCall(ParsedExpr Callee);
  ParsedExpr parseIndex(ParsedExpr Base);
  ParsedExpr parseMember(ParsedExpr Base);
  ParsedExpr parsePrimary();
  ParsedExpr parseParenExpr();
  ParsedExpr node(ExprPtr E, SourceLoc Start, unsigned Height);

  Lexer Lex;
  /// The token after Tok when peekToken() has read it.
  std::optional<Token> Peeked;
  DiagnosticEngine &Diags;
  Token Tok;
  /// Just past the previous token: where a missing ';' is reported.
  SourceLoc PrevEnd{1, 1};
  /// The kinds of the last two consumed tokens, the last first.
  TokenKind PrevKind[2] = {TokenKind::Eof, TokenKind::Eof};
  /// Counts consumed tokens; loops compare it to make sure they progress.
  unsigned long long NumConsumed = 0;
  /// Current recursion depth (see NestingScope).
  unsigned Depth = 0;
  /// Where the last error was reported; a second one there is dropped.
  SourceLoc LastErrorLoc;
  /// The structs declared so far (a struct is named after its declaration,
  /// and in its own fields, where the verifier reports the recursion).
  std::map<std::string, const Aggregate *, std::less<>> Structs;
};

/// One level of parser recursion (a block, a parenthesised or argument
/// expression, an operand of a unary operator). Past MaxNesting it reports
/// an error and the caller must give up (check ok()).
class Parser::NestingScope {
public:
  NestingScope(Parser &P, SourceLoc Loc) : P(P) {
    Ok = ++P.Depth <= MaxNesting;
    if (!Ok)
      P.reportTooDeep(Loc);
  }
  ~NestingScope() { --P.Depth; }
  NestingScope(const NestingScope &) = delete;
  NestingScope &operator=(const NestingScope &) = delete;
  bool ok() const { return Ok; }

private:
  Parser &P;
  bool Ok;
};

//===----------------------------------------------------------------------===//
// Tokens and diagnostics
//===----------------------------------------------------------------------===//

void Parser::consume() {
  PrevKind[1] = PrevKind[0];
  PrevKind[0] = Tok.Kind;
  PrevEnd = SourceLoc{Tok.Loc.Line, Tok.Loc.Col + static_cast<unsigned>(Tok.Text.size())};
  Tok = Peeked ? *std::exchange(Peeked, std::nullopt) : Lex.lex();
  ++NumConsumed;
}

bool Parser::consumeIf(TokenKind K) {
  if (Tok.isNot(K))
    return false;
  consume();
  return true;
}

// A contextual keyword (Keywords.def) is lexed as an identifier; where the
// grammar expects one, these read it as the keyword.
bool Parser::atContextual(std::string_view Keyword) const {
  return Tok.is(TokenKind::Identifier) && Tok.Text == Keyword;
}

bool Parser::consumeContextual(std::string_view Keyword) {
  if (!atContextual(Keyword))
    return false;
  consume();
  return true;
}

const Token &Parser::peekToken() {
  if (!Peeked)
    Peeked = Lex.lex();
  return *Peeked;
}

ParamMode Parser::parseParamMode() {
  ParamMode M = atContextual(contextual::Out)     ? ParamMode::Out
                : atContextual(contextual::InOut) ? ParamMode::InOut
                                                  : ParamMode::In;
  if (M == ParamMode::In || peekToken().isNot(TokenKind::Identifier))
    return ParamMode::In;
  consume();
  return M;
}

// Consumes a '>' that closes `ptr<...>`. A token that starts with '>' (as
// in `ptr<f32>= p` or `ptr<f32>>`) is split, its rest staying current.
bool Parser::consumeGreater() {
  TokenKind Rest;
  switch (Tok.Kind) {
  case TokenKind::Greater:
    consume();
    return true;
  case TokenKind::GreaterEq:
    Rest = TokenKind::Equal;
    break;
  case TokenKind::GreaterGreater:
    Rest = TokenKind::Greater;
    break;
  case TokenKind::GreaterGreaterEq:
    Rest = TokenKind::GreaterEq;
    break;
  default:
    return false;
  }
  PrevEnd = SourceLoc{Tok.Loc.Line, Tok.Loc.Col + 1};
  Tok.Kind = Rest;
  Tok.Text.remove_prefix(1);
  Tok.Loc.Col += 1;
  ++NumConsumed;
  return true;
}

void Parser::error(SourceLoc Loc, std::string Message) {
  if (Loc.Line == LastErrorLoc.Line && Loc.Col == LastErrorLoc.Col)
    return;
  LastErrorLoc = Loc;
  Diags.error(Loc, std::move(Message));
}

// Reports at the current token, unless the lexer already reported it.
void Parser::errorAtTok(std::string Message) {
  if (Tok.Diagnosed)
    return;
  error(Tok.Loc, std::move(Message));
}

/// "expected WHAT, found 'TOKEN'" at the current token.
void Parser::errorExpected(std::string_view What) {
  errorAtTok("expected " + std::string(What) + ", found " + describeTok() +
             (Tok.is(TokenKind::Identifier) ? cudaSpellingHint(Tok.Text) : std::string()));
}

// The current token for a message: its text in quotes (shortened if very
// long) or "end of file".
std::string Parser::describeTok() const {
  if (Tok.is(TokenKind::Eof))
    return "end of file";
  constexpr size_t MaxShown = 40;
  if (Tok.Text.size() > MaxShown)
    return "'" + std::string(Tok.Text.substr(0, MaxShown)) + "...'";
  return "'" + std::string(Tok.Text) + "'";
}

/// Consumes a token of kind \p K, or reports "expected 'K' CONTEXT, found
/// ..." and returns false.
bool Parser::expect(TokenKind K, std::string_view Context) {
  if (consumeIf(K))
    return true;
  std::string What(tokenKindName(K));
  if (!Context.empty())
    What += " " + std::string(Context);
  errorExpected(What);
  return false;
}

// Expects the ';' that ends a statement or a const declaration. A missing
// one is reported just after the previous token. Returns true (the
// statement is complete) when parsing can simply go on: the next token is
// on a later line, or ends the block, or is the end of input. Otherwise the
// caller drops the statement and skips the rest of it.
bool Parser::expectSemi(std::string_view After) {
  if (consumeIf(TokenKind::Semi))
    return true;
  if (!Tok.Diagnosed)
    error(PrevEnd, "expected ';' after " + std::string(After));
  return Tok.Loc.Line > PrevEnd.Line || Tok.is(TokenKind::RBrace) || Tok.is(TokenKind::Eof);
}

void Parser::reportTooDeep(SourceLoc Loc) {
  error(Loc, "nesting is too deep (limit " + std::to_string(MaxNesting) + ")");
}

//===----------------------------------------------------------------------===//
// Recovery
//===----------------------------------------------------------------------===//

// Skips the rest of a failed statement: up to and including the next ';' at
// the statement's brace depth (not one inside `[T; N]`), or past a `{ ... }`
// group that closes at that depth (and any `else` parts after it); stops
// before a '}' that closes the enclosing block, before a module-level
// keyword, and at the end of input.
void Parser::skipStatement() {
  unsigned BraceDepth = 0, BracketDepth = 0;
  while (Tok.isNot(TokenKind::Eof) && !isDeclKeyword(Tok.Kind)) {
    switch (Tok.Kind) {
    case TokenKind::RBrace:
      if (BraceDepth == 0)
        return;
      consume();
      if (--BraceDepth == 0 && Tok.isNot(TokenKind::KwElse))
        return;
      continue;
    case TokenKind::LBrace:
      ++BraceDepth;
      break;
    case TokenKind::LBracket:
      ++BracketDepth;
      break;
    case TokenKind::RBracket:
      BracketDepth -= BracketDepth != 0;
      break;
    case TokenKind::Semi:
      if (BraceDepth == 0 && BracketDepth == 0) {
        consume();
        return;
      }
      break;
    default:
      break;
    }
    consume();
  }
}

// Skips to the next `kernel`, `fn` or `const`, or the end of input.
void Parser::skipToDecl() {
  while (Tok.isNot(TokenKind::Eof) && !isDeclKeyword(Tok.Kind))
    consume();
}

//===----------------------------------------------------------------------===//
// Module level
//===----------------------------------------------------------------------===//

void Parser::parseModule(Module &M) {
  while (Tok.isNot(TokenKind::Eof)) {
    auto Before = NumConsumed;
    if (std::unique_ptr<Decl> D = parseDecl()) {
      M.Decls.push_back(std::move(D));
      continue;
    }
    skipToDecl();
    // A failed declaration has always consumed a token by now; this is only
    // a guard against looping forever should that ever change.
    if (NumConsumed == Before)
      consume();
  }
}

// decl ::= const-decl | constant-decl | function
std::unique_ptr<Decl> Parser::parseDecl() {
  if (Tok.is(TokenKind::Identifier) && Tok.Text == contextual::Constant)
    return parseConstDecl();
  if (atContextual(contextual::Struct))
    return parseStructDecl();
  switch (Tok.Kind) {
  case TokenKind::KwConst:
    return parseConstDecl();
  case TokenKind::KwFn:
  case TokenKind::KwKernel:
    return parseFunction();
  default:
    errorExpected("'const', 'constant', 'struct', 'fn' or 'kernel' at top level");
    return nullptr;
  }
}

// const-decl    ::= 'const' NAME ':' type ['=' (expr | array-init)] ';'
// constant-decl ::= 'constant' NAME ':' array-type ';'
// `constant` is a contextual keyword: only a module-level declaration
// starts with it. The verifier says which types each may have.
std::unique_ptr<ConstDecl> Parser::parseConstDecl() {
  auto C = std::make_unique<ConstDecl>(Tok.Loc);
  bool IsConstant = Tok.is(TokenKind::Identifier);
  std::string Keyword = IsConstant ? "'constant'" : "'const'";
  consume(); // 'const' or 'constant'
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected("constant name after " + Keyword);
    return nullptr;
  }
  C->Var.Storage = IsConstant ? StorageKind::Constant : StorageKind::Const;
  C->Var.Loc = Tok.Loc;
  C->Var.Name = std::string(Tok.Text);
  consume();
  if (!expect(TokenKind::Colon, "after constant name"))
    return nullptr;
  C->Var.Ty = parseType(/*AllowArray=*/true, &C->Var);
  if (!C->Var.Ty.isValid())
    return nullptr;
  if (IsConstant && Tok.is(TokenKind::Equal)) {
    errorAtTok("constant memory '" + C->Var.Name +
               "' has no initializer: the host sets its contents before a launch (they start "
               "as zero); a table known when compiling is a 'const'");
    return nullptr;
  }
  if (consumeIf(TokenKind::Equal)) {
    if (Tok.is(TokenKind::LBracket)) {
      C->Table = std::make_unique<ArrayInit>();
      if (!parseArrayInit(*C->Table, 1))
        return nullptr;
    } else if (!(C->Init = parseExpr())) {
      return nullptr;
    }
  }
  if (!expectSemi("declaration"))
    return nullptr;
  return C;
}

// array-init ::= '[' [expr (',' expr)* [',']] ']'
//              | '[' array-init (',' array-init)* [','] ']'
// \p Level counts the '[' open (at most MaxArrayRank).
bool Parser::parseArrayInit(ArrayInit &Init, unsigned Level) {
  Init.Loc = Tok.Loc;
  consume(); // '['
  while (Tok.isNot(TokenKind::RBracket)) {
    if (Tok.is(TokenKind::LBracket)) {
      if (Level >= MaxArrayRank) {
        error(Tok.Loc, "a table's initializer nests at most " + std::to_string(MaxArrayRank) +
                           " lists, as an array type has at most " + std::to_string(MaxArrayRank) +
                           " dimensions");
        return false;
      }
      if (!Init.Elems.empty()) {
        errorAtTok("a list of rows cannot mix rows and elements");
        return false;
      }
      Init.Rows.emplace_back();
      if (!parseArrayInit(Init.Rows.back(), Level + 1))
        return false;
    } else {
      if (!Init.Rows.empty()) {
        errorAtTok("a list of rows cannot mix rows and elements");
        return false;
      }
      ExprPtr E = parseExpr();
      if (!E)
        return false;
      Init.Elems.push_back(std::move(E));
    }
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  return expect(TokenKind::RBracket, "after the elements of a table");
}

// struct-decl ::= 'struct' NAME '{' [NAME ':' type (',' NAME ':' type)* [',']] '}'
std::unique_ptr<StructDecl> Parser::parseStructDecl() {
  auto S = std::make_unique<StructDecl>(Tok.Loc);
  consume(); // 'struct'
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected("struct name after 'struct'");
    return nullptr;
  }
  S->NameLoc = Tok.Loc;
  S->Agg.Name = std::string(Tok.Text);
  consume();
  // Named from here on, so that a field of the struct's own type parses
  // (and the verifier reports it); a second struct of the name keeps the
  // first's place (the verifier reports the redeclaration).
  Structs.emplace(S->Agg.Name, &S->Agg);
  if (!expect(TokenKind::LBrace, "after struct name"))
    return nullptr;
  while (!consumeIf(TokenKind::RBrace)) {
    if (Tok.isNot(TokenKind::Identifier)) {
      errorExpected("field name or '}' in struct");
      return nullptr;
    }
    SourceLoc FieldLoc = Tok.Loc;
    std::string FieldName(Tok.Text);
    consume();
    if (!expect(TokenKind::Colon, "after field name"))
      return nullptr;
    Type FieldTy = parseType(/*AllowArray=*/false);
    if (!FieldTy.isValid())
      return nullptr;
    S->Agg.Fields.push_back({std::move(FieldName), FieldTy});
    S->FieldLocs.push_back(FieldLoc);
    if (Tok.isNot(TokenKind::RBrace) && !consumeIf(TokenKind::Comma)) {
      errorExpected("',' or '}' after struct field");
      return nullptr;
    }
  }
  return S;
}

const Aggregate *Parser::lookupAggregate(std::string_view Name) const {
  if (auto It = Structs.find(Name); It != Structs.end())
    return It->second;
  return lookupVectorType(Name);
}

// function ::= ('kernel' | 'fn') NAME '(' params ')' ['->' type] block
std::unique_ptr<FunctionDecl> Parser::parseFunction() {
  bool IsKernel = Tok.is(TokenKind::KwKernel);
  auto F = std::make_unique<FunctionDecl>(Tok.Loc, IsKernel);
  consume(); // 'kernel' or 'fn'
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected(IsKernel ? "kernel name after 'kernel'" : "function name after 'fn'");
    return nullptr;
  }
  F->Name = std::string(Tok.Text);
  consume();
  if (!expect(TokenKind::LParen, "after function name") || !parseParamList(*F))
    return nullptr;
  std::string_view BodyContext = "or '->' after parameter list";
  if (consumeIf(TokenKind::Arrow)) {
    F->ReturnTy = parseType(/*AllowArray=*/false);
    if (!F->ReturnTy.isValid())
      return nullptr;
    BodyContext = "to start function body";
  }
  if (!(F->Body = parseBlock(BodyContext)))
    return nullptr;
  return F;
}

// params ::= [param (',' param)*] ')'   (the '(' is already consumed)
bool Parser::parseParamList(FunctionDecl &F) {
  if (consumeIf(TokenKind::RParen))
    return true;
  while (true) {
    std::unique_ptr<VarDecl> P = parseParam();
    if (!P)
      return false;
    F.Params.push_back(std::move(P));
    if (consumeIf(TokenKind::RParen))
      return true;
    if (!consumeIf(TokenKind::Comma)) {
      errorExpected("',' or ')' after parameter");
      return false;
    }
  }
}

// param ::= ['var' | 'out' | 'inout'] NAME ':' type
// `var` makes the parameter assignable in the body, as it makes a local;
// `out` and `inout` (contextual) also copy it back to the caller.
std::unique_ptr<VarDecl> Parser::parseParam() {
  if ((atContextual(contextual::Out) || atContextual(contextual::InOut)) &&
      peekToken().is(TokenKind::KwVar)) {
    errorAtTok("an '" + std::string(Tok.Text) +
               "' parameter is assignable already; write it without 'var'");
    return nullptr;
  }
  ParamMode Mode = parseParamMode();
  bool Mutable = Mode == ParamMode::In && consumeIf(TokenKind::KwVar);
  if (Tok.isNot(TokenKind::Identifier)) {
    // (A mode is only read when a name follows it.)
    errorExpected(Mutable ? "parameter name after 'var'" : "parameter name");
    return nullptr;
  }
  auto P = std::make_unique<VarDecl>();
  P->Storage = StorageKind::Param;
  P->Mutable = Mutable;
  P->Mode = Mode;
  P->Loc = Tok.Loc;
  P->Name = std::string(Tok.Text);
  consume();
  if (!expect(TokenKind::Colon, "after parameter name"))
    return nullptr;
  P->Ty = parseType(/*AllowArray=*/false);
  if (!P->Ty.isValid())
    return nullptr;
  return P;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// type ::= scalar | 'ptr' '<' scalar [',' ('shared' | 'local')] '>'
//        | '[' scalar [';' expr] ']'           (declarations only)
//        | '[' array-type ';' expr ']'         (a multi-dimensional array)
// Arrays are parsed everywhere, for good recovery, but are an error unless
// \p AllowArray; their size expressions go to *SizesOf when given
// (ArraySize the outermost, InnerArraySizes the rest).
// Returns an invalid Type after reporting an error, except for an unknown
// type name (`float`): that one is reported and parsing goes on with `i32`
// in its place (the module is rejected anyway), so that a misspelt type
// does not cost the rest of the declaration.
Type Parser::parseType(bool AllowArray, VarDecl *SizesOf) {
  if (Tok.is(TokenKind::LBracket))
    return parseArrayType(AllowArray, SizesOf);
  if (Tok.is(TokenKind::Identifier) && Tok.Text == "ptr")
    return parsePointerType();
  if (Tok.is(TokenKind::Identifier))
    if (const Aggregate *A = lookupAggregate(Tok.Text)) {
      consume();
      return Type::getStruct(A);
    }
  if (Tok.is(TokenKind::Identifier) && !scalarFromName(Tok.Text)) {
    errorAtTok("unknown type " + describeTok() + cudaSpellingHint(Tok.Text));
    consume();
    return Type::getScalar(ScalarKind::I32);
  }
  std::optional<ScalarKind> S = parseScalarTypeName("type");
  return S ? Type::getScalar(*S) : Type();
}

// Consumes a scalar type name (`i32`, `bool`, ...) or reports "expected
// WHAT, found ...".
std::optional<ScalarKind> Parser::parseScalarTypeName(std::string_view What) {
  std::optional<ScalarKind> S;
  if (Tok.is(TokenKind::Identifier))
    S = scalarFromName(Tok.Text);
  if (!S) {
    errorExpected(What);
    return std::nullopt;
  }
  consume();
  return S;
}

// array-type ::= '[' scalar ']' | '[' scalar ';' expr ']'
//              | '[' array-type ';' expr ']'
Type Parser::parseArrayType(bool AllowArray, VarDecl *SizesOf) {
  if (!AllowArray)
    errorAtTok("array types are only allowed in 'var', 'shared', 'const' and 'constant' "
               "declarations");
  consume();                  // '['
  std::vector<ExprPtr> Sizes; // innermost first, as written
  unsigned Open = 1;          // brackets not yet closed
  Type T = parseArrayTypeRest(Sizes, Open);
  if (!T.isValid()) {
    skipArrayTypeRest(Open);
    return T;
  }
  if (SizesOf && !Sizes.empty()) {
    SizesOf->ArraySize = std::move(Sizes.back());
    Sizes.pop_back();
    SizesOf->InnerArraySizes.assign(std::make_move_iterator(Sizes.rbegin()),
                                    std::make_move_iterator(Sizes.rend()));
  }
  return T;
}

// Parses what follows the '[' of an array type, up to and including the
// ']', adding its size expressions to \p Sizes, innermost first. \p Open
// counts the '[' not yet closed, for recovery. An array type nested in
// another (`[f32; 17]` in `[[f32; 17]; 16]`) must have a size.
Type Parser::parseArrayTypeRest(std::vector<ExprPtr> &Sizes, unsigned &Open) {
  bool Nested = Open > 1;
  SourceLoc ElemLoc = Tok.Loc;
  Type ElemTy;
  if (Tok.is(TokenKind::LBracket)) {
    // An array of arrays: a row type, at most MaxArrayRank deep in all
    // (checked before recursing, so that no input nests deeper).
    if (Open >= MaxArrayRank) {
      error(ElemLoc, "an array type has at most " + std::to_string(MaxArrayRank) + " dimensions");
      return Type();
    }
    consume();
    ++Open;
    ElemTy = parseArrayTypeRest(Sizes, Open);
    if (!ElemTy.isValid())
      return Type();
  } else {
    // The element is parsed as a scalar or pointer type, so that
    // `[ptr<f32>; 4]` is consumed whole, then checked to be a scalar.
    std::string ElemText = describeTok();
    bool ElemDiagnosed = Tok.Diagnosed;
    ElemTy = parseType(/*AllowArray=*/false);
    if (!ElemTy.isValid())
      return Type();
    if (!ElemTy.isScalar() && !ElemTy.isStruct() && !ElemDiagnosed)
      error(ElemLoc, "expected scalar element type after '[', found " + ElemText);
    ElemTy = ElemTy.getPointeeType();
  }
  if (!Nested && !ElemTy.isArray() && consumeIf(TokenKind::RBracket)) {
    --Open;
    return Type::getArrayOf(ElemTy, 0);
  }
  if (!consumeIf(TokenKind::Semi)) {
    errorExpected(Nested || ElemTy.isArray() ? "';' and a size after array element type"
                                             : "';' or ']' after array element type");
    return Type();
  }
  // The size is any expression here; the verifier folds it and says what
  // a constant expression may hold.
  if (!canStartExpression(Tok.Kind)) {
    errorExpected("array size (a constant expression)");
    return Type();
  }
  ExprPtr Size = parseExpr();
  if (!Size || !expect(TokenKind::RBracket, "after array size"))
    return Type();
  // A literal gives the count at once (the verifier checks it again).
  uint64_t Count = 0;
  if (auto *Lit = llvm::dyn_cast<IntLitExpr>(Size.get()))
    Count = Lit->Value;
  --Open;
  Sizes.push_back(std::move(Size));
  return Type::getArrayOf(ElemTy, Count);
}

// After an error inside an array type: skips to the ']' that closes it (and
// consumes it), so that the ';' of `[T; N]` is not taken for the end of the
// statement; \p BracketDepth '[' are open (more than one inside a nested
// array type). Stops early before '{', '}', '=', a module-level keyword or
// the end of input.
void Parser::skipArrayTypeRest(unsigned BracketDepth) {
  while (Tok.isNot(TokenKind::Eof) && !isDeclKeyword(Tok.Kind) && Tok.isNot(TokenKind::LBrace) &&
         Tok.isNot(TokenKind::RBrace) && Tok.isNot(TokenKind::Equal)) {
    if (Tok.is(TokenKind::LBracket))
      ++BracketDepth;
    bool Closes = Tok.is(TokenKind::RBracket) && --BracketDepth == 0;
    consume();
    if (Closes)
      return;
  }
}

// pointer-type ::= 'ptr' '<' scalar [',' ('shared' | 'local')] '>'
Type Parser::parsePointerType() {
  consume(); // 'ptr'
  if (!expect(TokenKind::Less, "after 'ptr'"))
    return Type();
  Type Pointee;
  if (Tok.is(TokenKind::Identifier))
    if (const Aggregate *A = lookupAggregate(Tok.Text)) {
      consume();
      Pointee = Type::getStruct(A);
    }
  if (!Pointee.isValid()) {
    std::optional<ScalarKind> S = parseScalarTypeName("scalar type after 'ptr<'");
    if (!S)
      return Type();
    Pointee = Type::getScalar(*S);
  }
  AddrSpace AS = AddrSpace::Global;
  if (consumeIf(TokenKind::Comma)) {
    if (Tok.is(TokenKind::KwShared)) {
      AS = AddrSpace::Shared;
    } else if (Tok.is(TokenKind::Identifier) && Tok.Text == "local") {
      AS = AddrSpace::Local;
    } else {
      errorExpected("'shared' or 'local' after ',' in pointer type");
      return Type();
    }
    consume();
  }
  if (!consumeGreater()) {
    errorExpected("'>' at end of pointer type");
    return Type();
  }
  return Type::getPointerTo(Pointee, AS);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

// block ::= '{' statement* '}'
// \p Context completes the message when the '{' is missing ("expected '{'
// CONTEXT, found ..."). A block that runs into the end of input or a
// module-level keyword is reported and returned as it is, so that the
// following declarations are still parsed.
BlockPtr Parser::parseBlock(std::string_view Context) {
  if (Tok.isNot(TokenKind::LBrace)) {
    errorExpected("'{' " + std::string(Context));
    return nullptr;
  }
  NestingScope Nest(*this, Tok.Loc);
  if (!Nest.ok())
    return nullptr;
  auto B = std::make_unique<BlockStmt>(Tok.Loc);
  consume(); // '{'
  while (!consumeIf(TokenKind::RBrace)) {
    if (Tok.is(TokenKind::Eof) || isDeclKeyword(Tok.Kind)) {
      errorExpected("'}' at end of block");
      return B;
    }
    auto Before = NumConsumed;
    if (StmtPtr S = parseStatement()) {
      B->Body.push_back(std::move(S));
      continue;
    }
    skipStatement();
    if (NumConsumed == Before && Tok.isNot(TokenKind::RBrace) && Tok.isNot(TokenKind::Eof) &&
        !isDeclKeyword(Tok.Kind))
      consume(); // cannot happen, but never loop without progress
  }
  return B;
}

// statement ::= decl-stmt | if-stmt | while-stmt | for-stmt | 'break' ';'
//             | 'continue' ';' | return-stmt | block | assign-or-call
StmtPtr Parser::parseStatement() {
  switch (Tok.Kind) {
  case TokenKind::KwLet:
  case TokenKind::KwVar:
  case TokenKind::KwShared:
    return parseDeclStmt();
  case TokenKind::KwIf:
    return parseIfStmt();
  case TokenKind::KwWhile:
    return parseWhileStmt();
  case TokenKind::KwFor:
    return parseForStmt();
  case TokenKind::KwBreak:
  case TokenKind::KwContinue:
    return parseJumpStmt();
  case TokenKind::KwReturn:
    return parseReturnStmt();
  case TokenKind::LBrace:
    return parseBlock("");
  default:
    return parseAssignOrCallStmt();
  }
}

// decl-stmt ::= ('let' | 'var' | 'shared') NAME ':' type ['=' expr] ';'
//             | ('let' | 'var') NAME '=' expr ';'
// Without a type the verifier infers it from the initializer.
StmtPtr Parser::parseDeclStmt() {
  auto D = std::make_unique<DeclStmt>(Tok.Loc);
  D->Var.Storage = Tok.is(TokenKind::KwLet)   ? StorageKind::Let
                   : Tok.is(TokenKind::KwVar) ? StorageKind::Var
                                              : StorageKind::Shared;
  std::string Context = "after " + std::string(tokenKindName(Tok.Kind));
  consume(); // 'let', 'var' or 'shared'
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected("variable name " + Context);
    return nullptr;
  }
  D->Var.Loc = Tok.Loc;
  D->Var.Name = std::string(Tok.Text);
  consume();
  if (D->Var.Storage != StorageKind::Shared && Tok.is(TokenKind::Equal)) {
    D->Var.TypeInferred = true;
  } else {
    if (!expect(TokenKind::Colon, D->Var.Storage == StorageKind::Shared
                                      ? "after variable name"
                                      : "or '=' after variable name"))
      return nullptr;
    D->Var.Ty = parseType(/*AllowArray=*/true, &D->Var);
    if (!D->Var.Ty.isValid())
      return nullptr;
  }
  if (consumeIf(TokenKind::Equal) && !(D->Init = parseExpr()))
    return nullptr;
  if (!expectSemi())
    return nullptr;
  return D;
}

// if-stmt ::= 'if' expr block ('else' 'if' expr block)* ['else' block]
// An `else if` chain is built in a loop, not by recursion, but each link
// counts as one level of nesting: the chain is that deep in the AST.
StmtPtr Parser::parseIfStmt() {
  auto First = std::make_unique<IfStmt>(Tok.Loc);
  if (!parseIfHead(*First))
    return nullptr;
  IfStmt *Last = First.get();
  unsigned ChainLength = 0;
  while (consumeIf(TokenKind::KwElse)) {
    if (Tok.is(TokenKind::KwIf)) {
      if (Depth + ++ChainLength > MaxNesting) {
        reportTooDeep(Tok.Loc);
        return nullptr;
      }
      auto Next = std::make_unique<IfStmt>(Tok.Loc);
      if (!parseIfHead(*Next))
        return nullptr;
      IfStmt *NextPtr = Next.get();
      Last->Else = std::move(Next);
      Last = NextPtr;
      continue;
    }
    if (!(Last->Else = parseBlock("or 'if' after 'else'")))
      return nullptr;
    break;
  }
  return First;
}

// Parses `'if' expr block` into S.
bool Parser::parseIfHead(IfStmt &S) {
  consume(); // 'if'
  return (S.Cond = parseExpr()) && (S.Then = parseBlock("after 'if' condition"));
}

// while-stmt ::= 'while' expr block
StmtPtr Parser::parseWhileStmt() {
  auto W = std::make_unique<WhileStmt>(Tok.Loc);
  consume(); // 'while'
  if (!(W->Cond = parseExpr()) || !(W->Body = parseBlock("after 'while' condition")))
    return nullptr;
  return W;
}

// for-stmt ::= 'for' NAME 'in' expr '..' expr ['step' expr] block
//            | 'for' [('let' | 'var') decl-rest] ';' expr ';' [update] block
// `in` and `step` are contextual keywords: a loop variable, or a name in
// the range, may be called `in` or `step` (`for in in in..step step step`).
// The token after `for` decides the form: `let`, `var` or `;` starts the
// general loop, a name the range loop.
// After an error in the header, recovery skips to the body, which the
// caller's skipStatement then skips whole: the header's own ';'s do not
// end the statement.
StmtPtr Parser::parseForStmt() {
  SourceLoc Loc = Tok.Loc;
  consume(); // 'for'
  StmtPtr S = Tok.is(TokenKind::KwLet) || Tok.is(TokenKind::KwVar) || Tok.is(TokenKind::Semi)
                  ? parseGeneralFor(Loc)
                  : parseRangeFor(Loc);
  if (!S)
    while (Tok.isNot(TokenKind::LBrace) && Tok.isNot(TokenKind::RBrace) &&
           Tok.isNot(TokenKind::Eof) && !isDeclKeyword(Tok.Kind))
      consume();
  return S;
}

StmtPtr Parser::parseRangeFor(SourceLoc Loc) {
  auto F = std::make_unique<ForStmt>(Loc);
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected("loop variable name after 'for'");
    return nullptr;
  }
  F->Index.Storage = StorageKind::LoopIndex;
  F->Index.Loc = Tok.Loc;
  F->Index.Name = std::string(Tok.Text);
  consume();
  if (!consumeContextual(contextual::In)) {
    if (Tok.is(TokenKind::Equal)) // C's `for (i = 0; ...)`
      errorAtTok("expected 'in' after loop variable, found '='; a loop with a condition and an "
                 "update is written 'for var " +
                 F->Index.Name + ": TYPE = START; CONDITION; UPDATE { }'");
    else
      errorExpected("'in' after loop variable");
    return nullptr;
  }
  if (!(F->Begin = parseExpr()) || !expect(TokenKind::DotDot, "in 'for' range") ||
      !(F->End = parseExpr()))
    return nullptr;
  if (consumeContextual(contextual::Step) && !(F->Step = parseExpr()))
    return nullptr;
  if (!(F->Body = parseBlock("after 'for' range")))
    return nullptr;
  return F;
}

// The general loop after `for`: a `let`/`var` declaration (which ends in
// its ';') or a lone ';', the condition, ';', and an optional update
// statement: an assignment, with no ';' of its own, before the body.
StmtPtr Parser::parseGeneralFor(SourceLoc Loc) {
  auto W = std::make_unique<WhileStmt>(Loc);
  if (!consumeIf(TokenKind::Semi) && !(W->Init = parseDeclStmt()))
    return nullptr;
  if (!(W->Cond = parseExpr()) || !expect(TokenKind::Semi, "after 'for' condition"))
    return nullptr;
  if (Tok.isNot(TokenKind::LBrace) && !(W->Update = parseAssignOrCallStmt(/*ForUpdate=*/true)))
    return nullptr;
  if (!(W->Body = parseBlock("after 'for' update")))
    return nullptr;
  return W;
}

// 'break' ';' | 'continue' ';'
StmtPtr Parser::parseJumpStmt() {
  SourceLoc Loc = Tok.Loc;
  bool IsBreak = Tok.is(TokenKind::KwBreak);
  consume();
  if (!expectSemi())
    return nullptr;
  if (IsBreak)
    return std::make_unique<BreakStmt>(Loc);
  return std::make_unique<ContinueStmt>(Loc);
}

// return-stmt ::= 'return' [expr] ';'
StmtPtr Parser::parseReturnStmt() {
  auto R = std::make_unique<ReturnStmt>(Tok.Loc);
  consume(); // 'return'
  if (Tok.isNot(TokenKind::Semi) && !(R->Value = parseExpr()))
    return nullptr;
  if (!expectSemi())
    return nullptr;
  return R;
}

// assign-or-call ::= expr ASSIGN-OP expr ';' | call ';'
// The target is any expression here; the verifier checks that it can be
// assigned to.
StmtPtr Parser::parseAssignOrCallStmt(bool ForUpdate) {
  SourceLoc Start = Tok.Loc;
  if (!canStartExpression(Tok.Kind)) {
    errorExpected(ForUpdate ? "an assignment or '{' after the 'for' condition" : "statement");
    return nullptr;
  }
  ExprPtr E = parseExpr();
  if (!E)
    return nullptr;
  if (std::optional<AssignOp> Op = assignOp(Tok.Kind)) {
    consume();
    ExprPtr Value = parseExpr();
    if (!Value || (!ForUpdate && !expectSemi()))
      return nullptr;
    return std::make_unique<AssignStmt>(Start, *Op, std::move(E), std::move(Value));
  }
  if (ForUpdate) {
    error(Start, "the update of a 'for' loop must be an assignment, such as 'i += 1'");
    return nullptr;
  }
  if (!llvm::isa<CallExpr>(E.get())) {
    std::string Hint;
    // `int i = 0;`, `__shared__ float s[4];`: CUDA C++ spellings.
    if (auto *N = llvm::dyn_cast<NameExpr>(E.get())) {
      Hint = cudaSpellingHint(N->Ident);
      std::optional<CudaSpelling> S = lookupCudaSpelling(N->Ident);
      if (S && scalarFromName(S->Kir))
        Hint = "; a declaration in KIR is 'let NAME: TYPE = VALUE;' or 'var NAME: TYPE = VALUE;'" +
               Hint;
    }
    error(Start, "expected an assignment or a call" + Hint);
    return nullptr;
  }
  if (!expectSemi())
    return nullptr;
  return std::make_unique<ExprStmt>(Start, std::move(E));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseExpr() { return parseExprWithInfo().E; }

// expr ::= conditional. Each nested expr (parentheses, arguments, indices,
// the middle of `?:`) is one level of nesting.
ParsedExpr Parser::parseExprWithInfo() {
  NestingScope Nest(*this, Tok.Loc);
  if (!Nest.ok())
    return {};
  return parseConditional();
}

// conditional ::= binary ('?' expr ':' conditional)?
// As in C: below `||`, right-associative (`a ? b : c ? d : e` is
// `a ? b : (c ? d : e)`), any expression between `?` and `:`. Each `?` is
// one level of nesting, so a long chain cannot overflow the stack.
ParsedExpr Parser::parseConditional() {
  ParsedExpr C = parseBinary(PrecLOr);
  if (!C || Tok.isNot(TokenKind::Question))
    return C;
  SourceLoc QLoc = Tok.Loc;
  NestingScope Nest(*this, QLoc);
  if (!Nest.ok())
    return {};
  consume();
  ParsedExpr T = parseExprWithInfo();
  if (!T || !expect(TokenKind::Colon, "in conditional expression"))
    return {};
  ParsedExpr F = parseConditional();
  if (!F)
    return {};
  unsigned Height = std::max({C.Height, T.Height, F.Height}) + 1;
  return node(std::make_unique<CondExpr>(QLoc, std::move(C.E), std::move(T.E), std::move(F.E)),
              C.Start, Height);
}

// Wraps a freshly built node, refusing it when the tree gets too high.
ParsedExpr Parser::node(ExprPtr E, SourceLoc Start, unsigned Height) {
  if (Height > MaxNesting) {
    reportTooDeep(E->getLoc());
    return {};
  }
  return {std::move(E), Start, Height};
}

// Precedence climbing over the binary operators with precedence at least
// MinPrec; all are left-associative except comparisons, which cannot be
// chained (`a < b < c` is an error, reported once per chain at the second
// operator; the parser then goes on as if it were left-associative).
ParsedExpr Parser::parseBinary(unsigned MinPrec) {
  ParsedExpr LHS = parseCast();
  if (!LHS)
    return {};
  bool LastWasComparison = false, ChainReported = false;
  while (true) {
    BinaryOpInfo Info = binaryOpInfo(Tok.Kind);
    if (Info.Prec == PrecNone || Info.Prec < MinPrec)
      return LHS;
    bool IsComparison = Info.Prec == PrecComparison;
    if (IsComparison && LastWasComparison && !ChainReported) {
      errorAtTok("comparison operators cannot be chained; add parentheses");
      ChainReported = true;
    }
    if (!IsComparison)
      ChainReported = false;
    LastWasComparison = IsComparison;
    consume();
    ParsedExpr RHS = parseBinary(Info.Prec + 1);
    if (!RHS)
      return {};
    unsigned Height = std::max(LHS.Height, RHS.Height) + 1;
    SourceLoc Start = LHS.Start;
    LHS = node(std::make_unique<BinaryExpr>(Start, Info.Op, std::move(LHS.E), std::move(RHS.E)),
               Start, Height);
    if (!LHS)
      return {};
  }
}

// cast ::= unary ('as' type)*
// `as` is a contextual keyword: after a complete operand an identifier can
// only be it, so a name `as` is still an operand elsewhere (`as as f32`).
ParsedExpr Parser::parseCast() {
  ParsedExpr E = parseUnary();
  while (E && atContextual(contextual::As)) {
    SourceLoc AsLoc = Tok.Loc;
    consume();
    Type T = parseType(/*AllowArray=*/false);
    if (!T.isValid())
      return {};
    E = node(std::make_unique<CastExpr>(AsLoc, std::move(E.E), T), E.Start, E.Height + 1);
  }
  return E;
}

// unary ::= ('-' | '!' | '~' | '&') unary | postfix
ParsedExpr Parser::parseUnary() {
  std::optional<UnaryOp> Op = unaryOp(Tok.Kind);
  if (!Op)
    return parsePostfix();
  SourceLoc OpLoc = Tok.Loc;
  NestingScope Nest(*this, OpLoc);
  if (!Nest.ok())
    return {};
  consume();
  ParsedExpr Operand = parseUnary();
  if (!Operand)
    return {};
  return node(std::make_unique<UnaryExpr>(OpLoc, *Op, std::move(Operand.E)), OpLoc,
              Operand.Height + 1);
}

// postfix ::= primary (call-args | '[' expr ']' | '.' ('x'|'y'|'z'))*
ParsedExpr Parser::parsePostfix() {
  ParsedExpr E = parsePrimary();
  while (E) {
    switch (Tok.Kind) {
    case TokenKind::LParen:
      E = parseCall(std::move(E));
      break;
    case TokenKind::LBracket:
      E = parseIndex(std::move(E));
      break;
    case TokenKind::Dot:
      E = parseMember(std::move(E));
      break;
    default:
      return E;
    }
  }
  return E;
}

// call-args ::= '(' [arg (',' arg)*] ')', arg ::= ['out' | 'inout'] expr.
// The callee must be a plain name (not parenthesised, not an element or a
// member). `print` may take a string literal first: `print("i = {}", i)`.
ParsedExpr Parser::parseCall(ParsedExpr Callee) {
  auto *Name = llvm::dyn_cast<NameExpr>(Callee.E.get());
  if (!Name || Callee.Start.Line != Name->getLoc().Line || Callee.Start.Col != Name->getLoc().Col) {
    errorAtTok("only a function name can be called");
    return {};
  }
  consume(); // '('
  std::vector<ExprPtr> Args;
  std::vector<ParamMode> Modes;
  unsigned Height = 1;
  // print's format: a string literal, first (docs/LangRef.md, "Printing").
  std::optional<std::string> Format;
  SourceLoc FormatLoc = Tok.Loc;
  if (Tok.is(TokenKind::StringLiteral) && Name->Ident == "print") {
    if (Tok.Diagnosed)
      return {};
    Format = std::string(Tok.StringBody);
    consume();
    if (!Tok.is(TokenKind::RParen) && !consumeIf(TokenKind::Comma)) {
      errorExpected("',' or ')' after the format string");
      return {};
    }
  }
  if (!consumeIf(TokenKind::RParen)) {
    while (true) {
      Modes.push_back(parseParamMode());
      ParsedExpr Arg = parseExprWithInfo();
      if (!Arg)
        return {};
      Height = std::max(Height, Arg.Height + 1);
      Args.push_back(std::move(Arg.E));
      if (consumeIf(TokenKind::RParen))
        break;
      if (!consumeIf(TokenKind::Comma)) {
        errorExpected("',' or ')' after call argument");
        return {};
      }
    }
  }
  auto Call = std::make_unique<CallExpr>(Name->getLoc(), Name->Ident, std::move(Args));
  if (llvm::any_of(Modes, [](ParamMode M) { return M != ParamMode::In; }))
    Call->ArgModes = std::move(Modes);
  Call->Format = std::move(Format);
  Call->FormatLoc = FormatLoc;
  return node(std::move(Call), Callee.Start, Height);
}

// index ::= postfix '[' expr ']'
ParsedExpr Parser::parseIndex(ParsedExpr Base) {
  SourceLoc BracketLoc = Tok.Loc;
  consume(); // '['
  ParsedExpr Idx = parseExprWithInfo();
  if (!Idx || !expect(TokenKind::RBracket, "after index"))
    return {};
  unsigned Height = std::max(Base.Height, Idx.Height) + 1;
  return node(std::make_unique<IndexExpr>(BracketLoc, std::move(Base.E), std::move(Idx.E)),
              Base.Start, Height);
}

// member ::= postfix '.' NAME
// `.x`, `.y`, `.z` of a builtin (Field 0, 1, 2), a struct's field or a
// vector's lane: the verifier decides which the base has.
ParsedExpr Parser::parseMember(ParsedExpr Base) {
  SourceLoc DotLoc = Tok.Loc;
  consume(); // '.'
  if (Tok.isNot(TokenKind::Identifier)) {
    errorExpected("a field name ('x', 'y', 'z' or a struct's field) after '.'");
    return {};
  }
  std::string Name(Tok.Text);
  unsigned Field = Name.size() == 1 ? std::string_view("xyz").find(Name[0]) : 3;
  consume();
  return node(
      std::make_unique<MemberExpr>(DotLoc, std::move(Base.E), std::min(Field, 3u), std::move(Name)),
      Base.Start, Base.Height + 1);
}

// struct-literal ::= NAME '{' [NAME ':' expr (',' NAME ':' expr)* [',']] '}'
// (the NAME, a struct's, is consumed). A call with the field names.
ParsedExpr Parser::parseStructLiteral(SourceLoc Loc, std::string Name) {
  consume(); // '{'
  // After an error: past the literal's own '}', so that the statement's
  // recovery does not take it for the end of the enclosing block.
  auto Fail = [&]() -> ParsedExpr {
    unsigned Depth = 1;
    while (Tok.isNot(TokenKind::Eof) && !isDeclKeyword(Tok.Kind) && Tok.isNot(TokenKind::Semi)) {
      if (Tok.is(TokenKind::LBrace))
        ++Depth;
      bool Closes = Tok.is(TokenKind::RBrace) && --Depth == 0;
      consume();
      if (Closes)
        break;
    }
    return {};
  };
  auto C = std::make_unique<CallExpr>(Loc, std::move(Name), std::vector<ExprPtr>());
  unsigned Height = 1;
  while (!consumeIf(TokenKind::RBrace)) {
    if (Tok.isNot(TokenKind::Identifier)) {
      errorExpected("field name or '}' in struct literal");
      return Fail();
    }
    C->FieldLocs.push_back(Tok.Loc);
    C->FieldNames.emplace_back(Tok.Text);
    consume();
    if (!expect(TokenKind::Colon, "after field name"))
      return Fail();
    ParsedExpr V = parseExprWithInfo();
    if (!V)
      return Fail();
    Height = std::max(Height, V.Height + 1);
    C->Args.push_back(std::move(V.E));
    if (Tok.isNot(TokenKind::RBrace) && !consumeIf(TokenKind::Comma)) {
      errorExpected("',' or '}' after struct literal field");
      return Fail();
    }
  }
  return node(std::move(C), Loc, Height);
}

// primary ::= INT | FLOAT | 'true' | 'false' | 'null' | NAME | '(' expr ')'
ParsedExpr Parser::parsePrimary() {
  SourceLoc Loc = Tok.Loc;
  ExprPtr E;
  switch (Tok.Kind) {
  case TokenKind::IntLiteral:
    E = std::make_unique<IntLitExpr>(Loc, Tok.IntValue, Tok.Suffix);
    break;
  case TokenKind::FloatLiteral:
    E = std::make_unique<FloatLitExpr>(Loc, Tok.FloatValue, Tok.Suffix);
    break;
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    E = std::make_unique<BoolLitExpr>(Loc, Tok.is(TokenKind::KwTrue));
    break;
  case TokenKind::Identifier:
    // `Node { ... }`: a struct literal (a struct's name is never a value,
    // so a block cannot follow it).
    if (auto It = Structs.find(Tok.Text); It != Structs.end()) {
      std::string Name(Tok.Text);
      consume();
      if (Tok.is(TokenKind::LBrace))
        return parseStructLiteral(Loc, std::move(Name));
      return {std::make_unique<NameExpr>(Loc, std::move(Name)), Loc, 1};
    }
    [[fallthrough]];
  case TokenKind::KwNull: // the builtin value `null`, which no name can hide
    E = std::make_unique<NameExpr>(Loc, std::string(Tok.Text));
    break;
  case TokenKind::LParen:
    return parseParenExpr();
  case TokenKind::StringLiteral:
    if (!Tok.Diagnosed)
      errorAtTok("a string literal may only be the format of 'print' (its first argument)");
    return {};
  default:
    // C's `i++` and `i--` (in a `for` update above all) lex as `i + +`
    // and `i - -`, with no operand after.
    if ((Tok.is(TokenKind::Plus) && PrevKind[0] == TokenKind::Plus) ||
        (PrevKind[0] == TokenKind::Minus && PrevKind[1] == TokenKind::Minus)) {
      bool Inc = Tok.is(TokenKind::Plus);
      errorAtTok("expected expression, found " + describeTok() + "; KIR has no '" +
                 (Inc ? "++" : "--") + "': write 'x " + (Inc ? "+" : "-") + "= 1'");
      return {};
    }
    errorExpected("expression");
    return {};
  }
  consume();
  return {std::move(E), Loc, 1};
}

// paren-expr ::= '(' expr ')'. The parentheses are not kept in the AST, but
// the expression's start becomes the '('.
ParsedExpr Parser::parseParenExpr() {
  SourceLoc Open = Tok.Loc;
  consume(); // '('
  ParsedExpr E = parseExprWithInfo();
  if (!E || !expect(TokenKind::RParen, "after expression"))
    return {};
  E.Start = Open;
  return E;
}

} // namespace

llvm::Expected<std::unique_ptr<Module>> gridjit::parseModule(std::string_view Source,
                                                             std::string_view BufferName) {
  DiagnosticEngine Diags(BufferName, Source);
  auto M = std::make_unique<Module>();
  M->Name = std::string(BufferName);
  M->Source = std::string(Source);
  // The lexer's tokens point into M->Source, which outlives the parser.
  Parser P(M->Source, Diags);
  P.parseModule(*M);
  if (llvm::Error Err = Diags.takeError())
    return std::move(Err);
  return std::move(M);
}
