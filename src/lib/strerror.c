/* SPDX-License-Identifier: MIT */
/* Names of uMSI error codes, for logs and tools. */
#include <umsi/types.h>

const char *umsi_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "OK";
	case UMSI_EPERM: return "EPERM";
	case UMSI_ENOENT: return "ENOENT";
	case UMSI_EIO: return "EIO";
	case UMSI_E2BIG: return "E2BIG";
	case UMSI_EAGAIN: return "EAGAIN";
	case UMSI_ENOMEM: return "ENOMEM";
	case UMSI_EBUSY: return "EBUSY";
	case UMSI_EEXIST: return "EEXIST";
	case UMSI_ENODEV: return "ENODEV";
	case UMSI_EINVAL: return "EINVAL";
	case UMSI_ENOSPC: return "ENOSPC";
	case UMSI_ERANGE: return "ERANGE";
	case UMSI_ENOSYS: return "ENOSYS";
	case UMSI_ELOOP: return "ELOOP";
	case UMSI_ENOTSUP: return "ENOTSUP";
	case UMSI_ETIMEDOUT: return "ETIMEDOUT";
	default: return "E?";
	}
}
