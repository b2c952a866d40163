/* calc.y: integer calculator grammar (yacc style). */
%token NUM LPAREN RPAREN END
%left PLUS MINUS
%left TIMES DIVIDE MOD
%right POW
%%
expr : expr PLUS expr
     | expr MINUS expr
     | expr TIMES expr
     | expr DIVIDE expr
     | expr MOD expr
     | expr POW expr
     | LPAREN expr RPAREN
     | MINUS expr
     | NUM
     ;
