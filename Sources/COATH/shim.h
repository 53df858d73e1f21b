#include <liboath/oath.h>
