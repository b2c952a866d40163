let token s = String.length s
let next_char s i = s.[i]
