/*
 * abi_dm.h - device memory (ibv_alloc_dm(3)): ALLOC_DM, FREE_DM, REG_DM_MR.
 * Part of the provider <-> daemon contract; included by uroce/abi.h after
 * struct uroce_hdr (see there for transport, versioning and the errors
 * common to every opcode). docs/device-memory.md describes the model.
 *
 * Device memory is what a ConnectX calls MEMIC: a small on-device buffer
 * the process reaches by loads and stores (mlx5 maps it through the verbs
 * device file) and the NIC reaches without crossing the host's memory bus.
 * Here it is a memfd the daemon creates, maps, and hands to the owner only;
 * the data path reads and writes the daemon's mapping directly.
 */
#ifndef UROCE_ABI_DM_H
#define UROCE_ABI_DM_H

#include <stdint.h>

/* Device memory per device (bytes): ibv_query_device_ex max_dm_size. */
#define UROCE_DM_MAX_SIZE (128u * 1024u)
/* Allocation granule (bytes): lengths are charged rounded up to it, and
 * every allocation starts on it (MEMIC's base size, mlx5 kernel dm.c
 * MLX5_MEMIC_BASE_SIZE). */
#define UROCE_DM_GRANULE 64u
/* Largest log_align_req honoured (a 4 KiB page: every DM starts at
 * offset 0 of its own mapping, which is page-aligned). */
#define UROCE_DM_MAX_LOG_ALIGN 12u
/* Default of --max-dm-per-user (bytes). */
#define UROCE_DM_DEFAULT_PER_USER (64u * 1024u)

/*
 * ALLOC_DM (ibv_alloc_dm(3)).
 *   length         bytes, 1 .. UROCE_DM_MAX_SIZE (0 or more: EINVAL, as
 *                  mlx5's alloc_dm_memic checks max_dm_size)
 *   log_align_req  log2 of the alignment asked for, 0 .. UROCE_DM_MAX_LOG_ALIGN
 *                  (EINVAL above)
 *   comp_mask      0 (EINVAL otherwise, as mlx5)
 * ENOMEM when the device's UROCE_DM_MAX_SIZE bytes or the uid's quota
 * (--max-dm-per-user, docs/security.md) would be exceeded; the charge is
 * length rounded up to UROCE_DM_GRANULE.
 * Reply: handle; map_size, the bytes of the memfd (length rounded up to the
 * page size), zero-filled. Reply fds: [memfd], sealed against shrinking and
 * growing; the provider maps it MAP_SHARED read-write and closes it. Only
 * the owning connection, and connections that imported its context
 * (uroce/abi_share.h IMPORT_OBJ), ever receive it.
 * FREE_DM (struct uroce_handle_req / uroce_handle_resp): EINVAL for a bad
 * handle, EBUSY while an MR is registered on it (as the kernel's uverbs
 * DM object with users). Device memory of a connection that closes is
 * freed with it (its MRs first).
 */
struct uroce_alloc_dm_req {
	struct uroce_hdr hdr;
	uint64_t length;
	uint32_t log_align_req;
	uint32_t comp_mask;
};
struct uroce_alloc_dm_resp {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
	uint64_t map_size;
};

/*
 * REG_DM_MR (ibv_reg_dm_mr(3)): an MR over [dm_offset, dm_offset+length)
 * of a DM of this client.
 *   pd_handle, dm_handle  this client's (EINVAL)
 *   access     must hold IBV_ACCESS_ZERO_BASED (EINVAL, as libibverbs'
 *              ibv_cmd_reg_dm_mr); the others allowed are LOCAL_WRITE,
 *              REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC and
 *              OPTIONAL_RANGE bits (mlx5 MLX5_DM_ALLOWED_ACCESS; others
 *              EINVAL); REMOTE_WRITE/ATOMIC need LOCAL_WRITE (EINVAL)
 *   dm_offset, length  bytes; the range must lie inside the DM's length
 *              (EINVAL, as uverbs DM_MR_REG); length 0 is allowed
 * The MR is zero-based: SGE addresses and remote VAs are offsets from the
 * MR's start (0 .. length). ENOMEM as REG_MR (max_mr, the uid's MR quota).
 * REREG_MR of it: EINVAL (the kernel's uverbs refuses DM MRs).
 * Reply: struct uroce_reg_mr_resp.
 */
struct uroce_reg_dm_mr_req {
	struct uroce_hdr hdr;
	uint32_t pd_handle;
	uint32_t dm_handle;
	uint32_t access;
	uint32_t reserved;
	uint64_t dm_offset;
	uint64_t length;
};

#endif /* UROCE_ABI_DM_H */
