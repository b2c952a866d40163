val token
val next_token
