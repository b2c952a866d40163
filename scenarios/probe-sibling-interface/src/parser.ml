uses lexer
val parse
val parse_expr
