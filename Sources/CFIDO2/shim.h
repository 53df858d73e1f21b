#include <fido.h>
#include <fido/es256.h>
#include <fido/eddsa.h>
#include <cbor.h>
