#include "greet.h"

const char *greet_word(int formal)
{
    return formal ? "Good day" : "Hi";
}
