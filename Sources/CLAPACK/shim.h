#ifndef NEARBYFUSION_CLAPACK_SHIM_H
#define NEARBYFUSION_CLAPACK_SHIM_H

/* Fortran LAPACK entry points used by NearbyFusion. Debian's liblapack-dev ships the
   library but no C header for the Fortran symbols, so the prototypes are declared here
   (column-major storage, every argument by reference, as the Fortran ABI requires). */

/* DSYEV: all eigenvalues (ascending) and, with jobz = 'V', orthonormal eigenvectors of a
   real symmetric matrix. */
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
            double *w, double *work, const int *lwork, int *info);

/* DPOSV: solves A X = B for symmetric positive-definite A by Cholesky factorisation. */
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
            double *b, const int *ldb, int *info);

#endif
