typedef enum { RED, GREEN, BLUE } color_t;

const char *color_name(color_t c)
{
    switch (c) {
    case RED:   return "red";
    case GREEN: return "green";
    case BLUE:  return "blue";
    default:    return "@@Munknown";
    }
}
