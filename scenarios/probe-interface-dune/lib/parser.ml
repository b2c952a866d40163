let parse s = Lexer.token s + 1
let peek s = Lexer.next_char s 0
